/**
 * Reading and signing the XML of the CCA eSign API: a strict parser for untrusted input, and the one XML-DSig
 * profile both directions use (the ASP's `<Esign>`, the ESP's `<EsignResp>`): an enveloped signature over the
 * whole document (Reference URI ""), RSA-SHA256, SHA-256 digest, exclusive c14n, the signer's X509Certificate in
 * KeyInfo. Signing and verifying are xml-crypto's (with @xmldom/xmldom); nothing here canonicalizes by hand.
 * Verification also accepts inclusive c14n 1.0 (and the enveloped transform alone, which implies it), since
 * ESPs built on Java's or xmlsec's defaults sign that way; everything else of the profile is required.
 *
 * Verification trusts the configured certificate only, never the one in KeyInfo, and hands back the element that
 * the signature covers, re-read from the canonical bytes xml-crypto verified: values are never read from the
 * original document, so a wrapped or duplicated element cannot change what the caller sees.
 */
import { DOMParser, XMLSerializer, type Document, type Element, type Node } from '@xmldom/xmldom';
import { SignedXml } from 'xml-crypto';

/** Larger input is refused before parsing: a request or response is a few kilobytes. */
export const MAX_ESIGN_XML_BYTES = 256 * 1024;

const DSIG_NS = 'http://www.w3.org/2000/09/xmldsig#';
const EXCLUSIVE_C14N = 'http://www.w3.org/2001/10/xml-exc-c14n#';
const INCLUSIVE_C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
/** Comment-less canonicalizations only: with comments, text the signer never saw could be signed over. */
const ACCEPTED_C14N: readonly (string | null)[] = [EXCLUSIVE_C14N, INCLUSIVE_C14N];
const ENVELOPED_SIGNATURE = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';
const RSA_SHA256 = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';

export type EsignXmlProblem =
  | 'too_large'
  | 'doctype'
  | 'malformed'
  | 'signature_missing'
  | 'signature_multiple'
  | 'signature_profile'
  | 'signature_invalid'
  | 'invalid_field';

/** Every refusal of eSign XML, whatever went wrong: callers catch this type and nothing else. */
export class EsignXmlError extends Error {
  constructor(
    readonly problem: EsignXmlProblem,
    message: string,
  ) {
    super(message);
    this.name = 'EsignXmlError';
  }
}

export interface XmlSigner {
  privateKeyPem: string;
  certificatePem: string;
}

/**
 * Parses untrusted XML. A DOCTYPE (so any entity declaration, internal or external) is refused outright rather
 * than parsed: the eSign API has none, and entity expansion is how XML parsers are attacked.
 */
export function parseUntrustedXml(xml: unknown): Document {
  if (typeof xml !== 'string') throw new EsignXmlError('malformed', 'the XML must be text');
  if (Buffer.byteLength(xml, 'utf8') > MAX_ESIGN_XML_BYTES) {
    throw new EsignXmlError('too_large', `the XML is larger than ${MAX_ESIGN_XML_BYTES} bytes`);
  }
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new EsignXmlError('doctype', 'a DOCTYPE or entity declaration is not allowed');
  let doc: Document;
  try {
    doc = new DOMParser({
      onError: (level, message) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(xml, 'text/xml');
  } catch (error) {
    throw new EsignXmlError('malformed', `not well-formed XML: ${(error as Error).message.split('\n')[0]}`);
  }
  if (doc.doctype) throw new EsignXmlError('doctype', 'a DOCTYPE is not allowed');
  if (!doc.documentElement) throw new EsignXmlError('malformed', 'the XML has no root element');
  return doc;
}

export function serializeXml(node: Node): string {
  return new XMLSerializer().serializeToString(node);
}

/** `xml` (one root element) with an enveloped signature of the profile above appended to its root. */
export function signEnveloped(xml: string, signer: XmlSigner): string {
  const signature = new SignedXml({
    privateKey: signer.privateKeyPem,
    publicCert: signer.certificatePem,
    signatureAlgorithm: RSA_SHA256,
    canonicalizationAlgorithm: EXCLUSIVE_C14N,
  });
  signature.addReference({
    xpath: '/*',
    isEmptyUri: true,
    transforms: [ENVELOPED_SIGNATURE, EXCLUSIVE_C14N],
    digestAlgorithm: SHA256,
  });
  signature.computeSignature(xml, { location: { reference: '/*', action: 'append' } });
  return signature.getSignedXml();
}

/**
 * Checks the enveloped signature of `xml` against `certificatePem` and answers the signed root element, read
 * from what was verified. Refused (`EsignXmlError`): bad XML, another root than `rootName`, no signature, more than
 * one, a signature that is not the root's child, not of the profile (one Reference, URI "", the two transforms,
 * the algorithms above), or that does not verify with this certificate.
 */
export function verifyEnveloped(xml: string, certificatePem: string, rootName: string): Element {
  const doc = parseUntrustedXml(xml);
  const root = doc.documentElement!;
  if (root.localName !== rootName || root.namespaceURI) {
    throw new EsignXmlError('malformed', `the root element is <${root.tagName}>, not <${rootName}>`);
  }
  const signatures = doc.getElementsByTagNameNS(DSIG_NS, 'Signature');
  if (signatures.length === 0) throw new EsignXmlError('signature_missing', 'the XML is not signed');
  if (signatures.length > 1) throw new EsignXmlError('signature_multiple', 'the XML carries more than one signature');
  const signature = signatures[0]!;
  if (signature.parentNode !== root) throw new EsignXmlError('signature_profile', 'the signature is not enveloped in the root');
  checkProfile(signature);

  const verifier = new SignedXml({ publicCert: certificatePem });
  let verified: boolean;
  try {
    verifier.loadSignature(serializeXml(signature));
    verified = verifier.checkSignature(xml);
  } catch (error) {
    throw new EsignXmlError('signature_invalid', `the signature does not verify: ${(error as Error).message}`);
  }
  const signedXml = verifier.getSignedReferences();
  if (!verified || signedXml.length !== 1) throw new EsignXmlError('signature_invalid', 'the signature does not verify');
  const signedRoot = parseUntrustedXml(signedXml[0]).documentElement!;
  if (signedRoot.localName !== rootName || signedRoot.namespaceURI) {
    throw new EsignXmlError('signature_profile', `the signature does not cover <${rootName}>`);
  }
  return signedRoot;
}

/**
 * The certificate an enveloped signature names in its KeyInfo (PEM), unverified: only for a gateway that
 * chooses to accept any self-consistent signature (a sandbox); then `verifyEnveloped` checks against it.
 */
export function keyInfoCertificatePem(xml: string): string | null {
  const doc = parseUntrustedXml(xml);
  const certificates = doc.getElementsByTagNameNS(DSIG_NS, 'X509Certificate');
  if (certificates.length !== 1) return null;
  const base64 = (certificates[0]!.textContent ?? '').replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return null;
  return `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** The signature's SignedInfo must be exactly our profile: anything weaker or broader is refused before verifying. */
function checkProfile(signature: Element): void {
  const refuse = (why: string): never => {
    throw new EsignXmlError('signature_profile', `the signature is not of the eSign profile: ${why}`);
  };
  const signedInfo = only(dsigChildren(signature, 'SignedInfo')) ?? refuse('one SignedInfo');
  const algorithm = (parent: Element, name: string) => only(dsigChildren(parent, name))?.getAttribute('Algorithm');
  if (!ACCEPTED_C14N.includes(algorithm(signedInfo, 'CanonicalizationMethod') ?? null)) refuse('c14n 1.0 or exclusive c14n');
  if (algorithm(signedInfo, 'SignatureMethod') !== RSA_SHA256) refuse('RSA-SHA256');
  const reference = only(dsigChildren(signedInfo, 'Reference')) ?? refuse('exactly one Reference');
  // URI "" is the document itself; a missing URI or an id reference could point elsewhere.
  if (!reference.hasAttribute('URI') || reference.getAttribute('URI') !== '') refuse('Reference URI ""');
  const transforms = only(dsigChildren(reference, 'Transforms')) ?? refuse('Transforms');
  const names = dsigChildren(transforms, 'Transform').map((transform) => transform.getAttribute('Algorithm'));
  const [first, second, ...more] = names;
  if (first !== ENVELOPED_SIGNATURE || (second !== undefined && !ACCEPTED_C14N.includes(second)) || more.length > 0) {
    refuse('the enveloped-signature transform, then c14n');
  }
  if (algorithm(reference, 'DigestMethod') !== SHA256) refuse('SHA-256 digest');
}

function dsigChildren(parent: Element, localName: string): Element[] {
  const found: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    const element = child as Element;
    if (child.nodeType === child.ELEMENT_NODE && element.namespaceURI === DSIG_NS && element.localName === localName) {
      found.push(element);
    }
  }
  return found;
}

function only<T>(items: T[]): T | undefined {
  return items.length === 1 ? items[0] : undefined;
}
