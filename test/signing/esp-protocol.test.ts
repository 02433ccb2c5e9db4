import { spawnSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignedXml } from 'xml-crypto';
import { createRootCa, issueSigningCertificate, type KeyAndCertificate } from '../../src/modules/signing/certificates';
import {
  buildEsignRequest,
  parseAndVerifyEsignRequest,
  type EsignRequestInput,
  type EsignVersion,
} from '../../src/modules/signing/esp/cca/esign-request';
import {
  buildEsignResponse,
  parseAndVerifyEsignResponse,
  verifyEsignSignature,
} from '../../src/modules/signing/esp/cca/esign-response';
import {
  buildEsignAcknowledgement,
  esignTxnRef,
  parseAndVerifyEsignAcknowledgement,
  readEsignTxnRef,
} from '../../src/modules/signing/esp/cca/esign-ack';
import { EsignXmlError, MAX_ESIGN_XML_BYTES, signEnveloped } from '../../src/modules/signing/esp/cca/xml-dsig';
import { GATEWAY_ERRORS, sandboxEspGatewayRouter } from '../../src/modules/sandbox/esp/sandbox-esp-gateway';
import { hasOpenssl, openssl } from '../helpers/openssl';
import { formOf, postForm } from '../helpers/factories';
import { hasXmlsec1, xmlsec1Verify } from '../helpers/xmlsec';

/** Debian's xmlsec1 signing `template` (a document with an empty Signature) with the key and certificate. */
function xmlsec1Sign(template: string, signer: KeyAndCertificate): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'xmlsec1-'));
  try {
    writeFileSync(path.join(dir, 'template.xml'), template);
    writeFileSync(path.join(dir, 'key.pem'), signer.privateKeyPem);
    writeFileSync(path.join(dir, 'cert.pem'), signer.certificatePem);
    const run = spawnSync('xmlsec1', ['--sign', '--privkey-pem', 'key.pem,cert.pem', '--output', 'signed.xml', 'template.xml'], {
      cwd: dir,
      encoding: 'utf8',
    });
    if (run.status !== 0) throw new Error(`xmlsec1 --sign failed: ${run.stderr}`);
    return readFileSync(path.join(dir, 'signed.xml'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function expectRefused(run: () => unknown, problem: EsignXmlError['problem']): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected a refusal (${problem})`).toBeInstanceOf(EsignXmlError);
  expect((thrown as EsignXmlError).problem).toBe(problem);
}

describe('CCA eSign API: requests, responses and the sandbox ESP gateway', () => {
  let asp: KeyAndCertificate;
  let otherAsp: KeyAndCertificate;
  let espCa: KeyAndCertificate;
  let espResponseSigner: KeyAndCertificate;
  let otherEsp: KeyAndCertificate;
  let gateway: ReturnType<express.Express['listen']>;
  let receiver: ReturnType<express.Express['listen']>;
  let gatewayUrl: string;
  let receiverUrl: string;
  /** What the ASP's responseUrl received: the EsignResp XML of each delivery. */
  const received: { via: 'browser form' | 'server post'; xml: string; espTxnId?: string }[] = [];

  const content = Buffer.from('%PDF-1.7 the bytes of the prepared signature range');
  const contentHash = createHash('sha256').update(content).digest('hex');

  const requestInput = (version: EsignVersion, overrides: Partial<EsignRequestInput> = {}): EsignRequestInput => ({
    version,
    txn: `txn-${version}-${Math.random().toString(36).slice(2)}`,
    aspId: 'TEST-ASP',
    responseUrl: `${receiverUrl}/esign/response`,
    redirectUrl: `${receiverUrl}/esign/back?session=s1`,
    documents: [{ id: '1', sha256Hex: contentHash, docInfo: 'Lease <Flat 4> & "annexure"' }],
    authMode: 1,
    signer: asp,
    ...overrides,
  });

  beforeAll(async () => {
    asp = createRootCa('Test ASP request signing', 'Test ASP');
    otherAsp = createRootCa('Another ASP', 'Elsewhere');
    espCa = createRootCa('Test Sandbox ESP CA', 'Test Sandbox ESP');
    const now = Date.now();
    espResponseSigner = issueSigningCertificate(
      espCa,
      { commonName: 'Test Sandbox ESP responses', organization: 'Test Sandbox ESP' },
      { notBefore: new Date(now - 60_000), notAfter: new Date(now + 86_400_000) },
    );
    otherEsp = createRootCa('Not the ESP', 'Elsewhere');

    const receiverApp = express();
    receiverApp.post(
      '/esign/response',
      express.urlencoded({ extended: false, limit: '1mb' }),
      express.text({ type: 'application/xml', limit: '1mb' }),
      (req, res) => {
        if (typeof req.body === 'string') received.push({ via: 'server post', xml: req.body });
        else received.push({ via: 'browser form', xml: req.body.eSignResponse, espTxnId: req.body.espTxnID });
        res.status(200).send('ok');
      },
    );
    receiver = receiverApp.listen(0, '127.0.0.1');
    await new Promise((resolve) => receiver.once('listening', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

    const gatewayApp = express();
    gatewayApp.use(
      '/sandbox/esp',
      sandboxEspGatewayRouter({
        issuer: espCa,
        responseSigner: espResponseSigner,
        trustedAspCertificatesPem: [asp.certificatePem],
      }),
    );
    gateway = gatewayApp.listen(0, '127.0.0.1');
    await new Promise((resolve) => gateway.once('listening', resolve));
    gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}/sandbox/esp`;
  });
  afterAll(async () => {
    await new Promise((resolve) => gateway?.close(resolve));
    await new Promise((resolve) => receiver?.close(resolve));
  });

  describe.each(['2.1', '3.2'] as const)('the request, version %s', (version) => {
    it.skipIf(!hasXmlsec1)('verifies with xmlsec1 against the ASP certificate, and a tampered copy does not', () => {
      const xml = buildEsignRequest(requestInput(version));
      const verified = xmlsec1Verify(xml, asp.certificatePem);
      expect(verified.output).toContain('OK');
      expect(verified.ok).toBe(true);
      expect(xmlsec1Verify(xml.replace('aspId="TEST-ASP"', 'aspId="EVIL-ASP"'), asp.certificatePem).ok).toBe(false);
      expect(xmlsec1Verify(xml.replace(contentHash, 'f'.repeat(64)), asp.certificatePem).ok).toBe(false);
      expect(xmlsec1Verify(xml, otherAsp.certificatePem).ok).toBe(false);
    });

    it('carries the attributes of its version, and reads back as built', () => {
      const input = requestInput(version, { authMode: 2, signerId: version === '3.2' ? 'asha@example.in' : undefined });
      const xml = buildEsignRequest(input);
      const esign = /<Esign [^>]*>/.exec(xml)![0];
      if (version === '2.1') {
        expect(esign).toMatch(
          /ver="2.1" sc="Y" ts="\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d" txn="[^"]+" ekycId="" ekycIdType="A" aspId="TEST-ASP" AuthMode="2" responseSigType="pkcs7" responseUrl="[^"]+"/,
        );
        expect(esign).not.toMatch(/redirectUrl|maxWaitPeriod|signingAlgorithm/);
      } else {
        expect(esign).toMatch(
          /ver="3.2" signerid="asha@example.in" ts="[^"]+" txn="[^"]+" maxWaitPeriod="1440" aspId="TEST-ASP" responseUrl="[^"]+" redirectUrl="[^"]+" signingAlgorithm="RSA"/,
        );
        expect(esign).not.toMatch(/ sc=|ekycIdType|AuthMode|responseSigType/);
      }
      const parsed = parseAndVerifyEsignRequest(xml, asp.certificatePem);
      expect(parsed).toMatchObject({
        ver: version,
        txn: input.txn,
        aspId: 'TEST-ASP',
        responseUrl: input.responseUrl,
        authMode: version === '2.1' ? 2 : null,
        redirectUrl: version === '3.2' ? input.redirectUrl : null,
        signerId: version === '3.2' ? 'asha@example.in' : null,
        documents: [{ id: '1', sha256Hex: contentHash, docInfo: 'Lease <Flat 4> & "annexure"' }],
      });
      expect(Math.abs(parsed.ts.getTime() - Date.now())).toBeLessThan(5_000);
    });
  });

  describe('parseAndVerifyEsignRequest refuses', () => {
    const signed = () => buildEsignRequest(requestInput('2.1'));

    it('a request signed by another key, a tampered attribute, a missing or a second signature', () => {
      expectRefused(
        () => parseAndVerifyEsignRequest(buildEsignRequest(requestInput('2.1', { signer: otherAsp })), asp.certificatePem),
        'signature_invalid',
      );
      expectRefused(
        () => parseAndVerifyEsignRequest(signed().replace('AuthMode="1"', 'AuthMode="2"'), asp.certificatePem),
        'signature_invalid',
      );
      expectRefused(
        () => parseAndVerifyEsignRequest(signed().replace(/<Signature [\s\S]*<\/Signature>/, ''), asp.certificatePem),
        'signature_missing',
      );
      const xml = signed();
      const signature = /<Signature [\s\S]*<\/Signature>/.exec(xml)![0];
      expectRefused(
        () => parseAndVerifyEsignRequest(xml.replace('</Docs>', `</Docs>${signature}`), asp.certificatePem),
        'signature_multiple',
      );
    });

    it('signature wrapping: a signed request inside another root, or a reference to anything but the whole document', () => {
      const xml = signed().replace('<?xml version="1.0" encoding="UTF-8"?>', '');
      const wrapped = `<Esign ver="2.1" sc="Y" ts="2030-01-01T00:00:00" txn="evil" ekycId="" ekycIdType="A" aspId="TEST-ASP" AuthMode="1" responseSigType="pkcs7" responseUrl="https://evil.example/"><Docs><InputHash id="1" hashAlgorithm="SHA256" docInfo="x">${'e'.repeat(64)}</InputHash></Docs>${xml}</Esign>`;
      expectRefused(() => parseAndVerifyEsignRequest(wrapped, asp.certificatePem), 'signature_profile');
      expectRefused(
        () => parseAndVerifyEsignRequest(xml.replace('<Reference URI="">', '<Reference URI="#x">'), asp.certificatePem),
        'signature_profile',
      );
      expectRefused(
        () => parseAndVerifyEsignRequest(xml.replace('<Reference URI="">', '<Reference>'), asp.certificatePem),
        'signature_profile',
      );
    });

    it('a DOCTYPE or entity, an oversized or malformed document, each with its typed error', () => {
      const xml = signed();
      const xxe = xml
        .replace(
          '<?xml version="1.0" encoding="UTF-8"?>',
          '<?xml version="1.0"?>\n<!DOCTYPE Esign [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n',
        )
        .replace('docInfo="Lease', 'docInfo="&x; Lease');
      expectRefused(() => parseAndVerifyEsignRequest(xxe, asp.certificatePem), 'doctype');
      expectRefused(
        () => parseAndVerifyEsignRequest(`<!DOCTYPE Esign>${xml.slice(xml.indexOf('<Esign'))}`, asp.certificatePem),
        'doctype',
      );
      expectRefused(
        () =>
          parseAndVerifyEsignRequest(
            xml.replace('</Docs>', `</Docs><!--${' '.repeat(MAX_ESIGN_XML_BYTES)}-->`),
            asp.certificatePem,
          ),
        'too_large',
      );
      expectRefused(() => parseAndVerifyEsignRequest(xml.slice(0, -20), asp.certificatePem), 'malformed');
      expectRefused(() => parseAndVerifyEsignRequest('not xml at all', asp.certificatePem), 'malformed');
      expectRefused(() => parseAndVerifyEsignRequest(42 as unknown as string, asp.certificatePem), 'malformed');
    });
  });

  describe('the response', () => {
    const cmsOver = () => {
      // A real PKCS#7 as the gateway makes it is checked in the runs below; here only the XML matters.
      return new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]);
    };
    const success = () =>
      buildEsignResponse({
        version: '2.1',
        txn: 'txn-r1',
        resCode: 'res-1',
        signer: espResponseSigner,
        status: 'success',
        userCertificatePem: espResponseSigner.certificatePem,
        signatures: [{ id: '1', cms: cmsOver() }],
      });

    it.skipIf(!hasXmlsec1)('verifies with xmlsec1 against the ESP certificate, and a tampered copy does not', () => {
      const xml = success();
      expect(xmlsec1Verify(xml, espResponseSigner.certificatePem).ok).toBe(true);
      expect(xmlsec1Verify(xml.replace('txn="txn-r1"', 'txn="txn-r2"'), espResponseSigner.certificatePem).ok).toBe(false);
      expect(xmlsec1Verify(xml, otherEsp.certificatePem).ok).toBe(false);
    });

    it('reads back a success and a failure', () => {
      const parsed = parseAndVerifyEsignResponse(success(), espResponseSigner.certificatePem);
      expect(parsed).toMatchObject({ ver: '2.1', status: '1', txn: 'txn-r1', resCode: 'res-1', errCode: '', errMsg: '' });
      expect(
        new X509Certificate(parsed.userCertificatePem).raw.equals(new X509Certificate(espResponseSigner.certificatePem).raw),
      ).toBe(true);
      expect(parsed.signatures).toEqual([{ id: '1', error: '', cms: Buffer.from(cmsOver()) }]);
      const failure = buildEsignResponse({
        version: '3.2',
        txn: 'txn-r2',
        resCode: 'res-2',
        signer: espResponseSigner,
        status: 'failure',
        ...GATEWAY_ERRORS.otpFailed,
      });
      expect(failure).not.toContain('UserX509Certificate');
      expect(parseAndVerifyEsignResponse(failure, espResponseSigner.certificatePem)).toMatchObject({
        ver: '3.2',
        status: '0',
        txn: 'txn-r2',
        errCode: 'ESP-910',
        userCertificatePem: '',
        signatures: [],
      });
    });

    it.skipIf(!hasXmlsec1)(
      'accepts a response signed by xmlsec1 with inclusive c14n, as ESPs on Java or xmlsec defaults sign',
      () => {
        const body = `<EsignResp ver="2.1" status="0" ts="2026-01-01T10:00:00" txn="txn-x" resCode="r-x" errCode="ESP-920" errMsg="The signer cancelled">`;
        const template = `${body}<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo><CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/><SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/><Reference URI=""><Transforms><Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/></Transforms><DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><DigestValue/></Reference></SignedInfo><SignatureValue/><KeyInfo><X509Data/></KeyInfo></Signature></EsignResp>`;
        const signed = xmlsec1Sign(template, espResponseSigner);
        expect(parseAndVerifyEsignResponse(signed, espResponseSigner.certificatePem)).toMatchObject({
          status: '0',
          txn: 'txn-x',
          errCode: 'ESP-920',
        });
        expectRefused(
          () => parseAndVerifyEsignResponse(signed.replace('txn="txn-x"', 'txn="txn-y"'), espResponseSigner.certificatePem),
          'signature_invalid',
        );
        const withSha1 = xmlsec1Sign(
          template
            .replace('http://www.w3.org/2001/04/xmldsig-more#rsa-sha256', 'http://www.w3.org/2000/09/xmldsig#rsa-sha1')
            .replace('http://www.w3.org/2001/04/xmlenc#sha256', 'http://www.w3.org/2000/09/xmldsig#sha1'),
          espResponseSigner,
        );
        expectRefused(() => parseAndVerifyEsignResponse(withSha1, espResponseSigner.certificatePem), 'signature_profile');
      },
    );

    it('refuses a signature of a weaker or broader profile, even when it verifies', () => {
      const unsigned = `<EsignResp ver="2.1" status="0" ts="2026-01-01T10:00:00" txn="t" resCode="r" errCode="x" errMsg="y"/>`;
      const sign = (configure: (signature: SignedXml) => void) => {
        const signature = new SignedXml({
          privateKey: espResponseSigner.privateKeyPem,
          publicCert: espResponseSigner.certificatePem,
        });
        configure(signature);
        signature.computeSignature(unsigned);
        return signature.getSignedXml();
      };
      const withComments = sign((signature) => {
        signature.signatureAlgorithm = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
        signature.canonicalizationAlgorithm = 'http://www.w3.org/2001/10/xml-exc-c14n#WithComments';
        signature.addReference({
          xpath: '/*',
          isEmptyUri: true,
          transforms: [
            'http://www.w3.org/2000/09/xmldsig#enveloped-signature',
            'http://www.w3.org/2001/10/xml-exc-c14n#WithComments',
          ],
          digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
        });
      });
      expectRefused(() => parseAndVerifyEsignResponse(withComments, espResponseSigner.certificatePem), 'signature_profile');
      const byId = sign((signature) => {
        signature.signatureAlgorithm = 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
        signature.canonicalizationAlgorithm = 'http://www.w3.org/2001/10/xml-exc-c14n#';
        signature.addReference({
          xpath: '/*',
          transforms: ['http://www.w3.org/2000/09/xmldsig#enveloped-signature', 'http://www.w3.org/2001/10/xml-exc-c14n#'],
          digestAlgorithm: 'http://www.w3.org/2001/04/xmlenc#sha256',
        });
      });
      expect(byId).toMatch(/<Reference URI="#/);
      expectRefused(() => parseAndVerifyEsignResponse(byId, espResponseSigner.certificatePem), 'signature_profile');
    });

    it('refuses a response signed by another key, a tampered one, and DOCTYPE/entity payloads', () => {
      const foreign = buildEsignResponse({
        version: '2.1',
        txn: 't',
        resCode: 'r',
        signer: otherEsp,
        status: 'failure',
        errCode: 'x',
        errMsg: 'y',
      });
      expectRefused(() => parseAndVerifyEsignResponse(foreign, espResponseSigner.certificatePem), 'signature_invalid');
      expectRefused(
        () => parseAndVerifyEsignResponse(success().replace('status="1"', 'status="0"'), espResponseSigner.certificatePem),
        'signature_invalid',
      );
      expectRefused(
        () =>
          parseAndVerifyEsignResponse(success().replace('resCode="res-1"', 'resCode="res-9"'), espResponseSigner.certificatePem),
        'signature_invalid',
      );
      const billionLaughs = `<?xml version="1.0"?><!DOCTYPE EsignResp [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><EsignResp status="1" txn="&b;"/>`;
      expectRefused(() => parseAndVerifyEsignResponse(billionLaughs, espResponseSigner.certificatePem), 'doctype');
      const external = success().replace(
        '<?xml version="1.0" encoding="UTF-8"?>',
        `<!DOCTYPE EsignResp SYSTEM "http://127.0.0.1:1/dtd">`,
      );
      expectRefused(() => parseAndVerifyEsignResponse(external, espResponseSigner.certificatePem), 'doctype');
      expectRefused(() => parseAndVerifyEsignResponse('<EsignResp', espResponseSigner.certificatePem), 'malformed');
    });
  });

  describe('the 3.2 acknowledgement', () => {
    it('reads back an acceptance and a refusal (errCode/errMsg, or errorCode/errorMessage as eMudhra writes them)', () => {
      const accepted = buildEsignAcknowledgement({
        version: '3.2',
        txn: 't-1',
        resCode: 'R-1',
        signer: espResponseSigner,
        status: 'accepted',
      });
      expect(accepted).toMatch(/<EsignResp ver="3\.2" status="2" ts="[^"]+" txn="t-1" resCode="R-1" errCode="" errMsg="">/);
      if (hasXmlsec1) expect(xmlsec1Verify(accepted, espResponseSigner.certificatePem).ok).toBe(true);
      expect(parseAndVerifyEsignAcknowledgement(accepted, espResponseSigner.certificatePem)).toMatchObject({
        status: '2',
        txn: 't-1',
        resCode: 'R-1',
      });
      const refused = buildEsignAcknowledgement({
        version: '3.2',
        txn: 't-2',
        resCode: 'R-2',
        signer: espResponseSigner,
        status: 'refused',
        errCode: 'ESP-101',
        errMsg: 'No',
      });
      expect(parseAndVerifyEsignAcknowledgement(refused, espResponseSigner.certificatePem)).toMatchObject({
        status: '0',
        errCode: 'ESP-101',
        errMsg: 'No',
      });
      const emudhra = signEnveloped(
        '<EsignResp ver="3.2" status="0" ts="2026-01-01T10:00:00" txn="t-3" resCode="" errorCode="ESP-102" errorMessage="Refused"/>',
        espResponseSigner,
      );
      expect(parseAndVerifyEsignAcknowledgement(emudhra, espResponseSigner.certificatePem)).toMatchObject({
        status: '0',
        errCode: 'ESP-102',
        errMsg: 'Refused',
      });
    });

    it('refuses a final response, an acceptance without resCode, another key and a tampered copy', () => {
      const final = signEnveloped(
        '<EsignResp ver="3.2" status="1" ts="2026-01-01T10:00:00" txn="t-5" resCode="R"/>',
        espResponseSigner,
      );
      expectRefused(() => parseAndVerifyEsignAcknowledgement(final, espResponseSigner.certificatePem), 'invalid_field');
      const noResCode = signEnveloped(
        '<EsignResp ver="3.2" status="2" ts="2026-01-01T10:00:00" txn="t-6" resCode=""/>',
        espResponseSigner,
      );
      expectRefused(() => parseAndVerifyEsignAcknowledgement(noResCode, espResponseSigner.certificatePem), 'invalid_field');
      const accepted = buildEsignAcknowledgement({
        version: '3.2',
        txn: 't-7',
        resCode: 'R-7',
        signer: espResponseSigner,
        status: 'accepted',
      });
      expectRefused(() => parseAndVerifyEsignAcknowledgement(accepted, otherEsp.certificatePem), 'signature_invalid');
      expectRefused(
        () =>
          parseAndVerifyEsignAcknowledgement(
            accepted.replace('resCode="R-7"', 'resCode="R-8"'),
            espResponseSigner.certificatePem,
          ),
        'signature_invalid',
      );
    });

    it('txnref is base64 of txn|resCode, and reads back only in that form', () => {
      expect(esignTxnRef('esptxn_1', 'R-1')).toBe(Buffer.from('esptxn_1|R-1').toString('base64'));
      expect(readEsignTxnRef(esignTxnRef('esptxn_1', 'R-1'))).toEqual({ txn: 'esptxn_1', resCode: 'R-1' });
      for (const bad of ['', 'x', Buffer.from('a|b|c').toString('base64'), Buffer.from('only').toString('base64'), 42]) {
        expect(readEsignTxnRef(bad)).toBeNull();
      }
    });
  });

  describe('the sandbox ESP gateway over HTTP', () => {
    /** Checks what the ASP's responseUrl received, as the ASP would, and answers it. */
    async function acceptedResponse(txn: string) {
      const delivery = received.find((candidate) => candidate.xml.includes(`txn="${txn}"`));
      expect(delivery, `a response for ${txn} reached responseUrl`).toBeDefined();
      if (hasXmlsec1) expect(xmlsec1Verify(delivery!.xml, espResponseSigner.certificatePem).ok).toBe(true);
      return { delivery: delivery!, response: parseAndVerifyEsignResponse(delivery!.xml, espResponseSigner.certificatePem) };
    }

    async function checkSigned(txn: string) {
      const { delivery, response } = await acceptedResponse(txn);
      expect(response).toMatchObject({ status: '1', txn, errCode: '' });
      expect(response.signatures).toHaveLength(1);
      const [signature] = response.signatures;
      expect(signature!.id).toBe('1');
      expect(verifyEsignSignature(signature!.cms, contentHash, response.userCertificatePem)).toEqual({
        valid: true,
        problems: [],
      });
      expect(verifyEsignSignature(signature!.cms, 'f'.repeat(64), response.userCertificatePem).valid).toBe(false);
      expect(verifyEsignSignature(signature!.cms, contentHash, espResponseSigner.certificatePem).valid).toBe(false);

      const certificate = new X509Certificate(response.userCertificatePem);
      expect(certificate.subject).toContain('CN=Asha Rao');
      expect(certificate.verify(new X509Certificate(espCa.certificatePem).publicKey)).toBe(true);
      const lifetime = new Date(certificate.validTo).getTime() - new Date(certificate.validFrom).getTime();
      expect(lifetime).toBe(31 * 60_000); // a minute back-dated, 30 ahead

      if (hasOpenssl) {
        // OpenSSL checks the messageDigest against the content and the signature with the carried certificate.
        const checked = await openssl(
          [
            'cms',
            '-verify',
            '-binary',
            '-noverify',
            '-inform',
            'DER',
            '-in',
            'signature.der',
            '-content',
            'content.bin',
            '-out',
            'out.bin',
          ],
          { 'signature.der': Buffer.from(signature!.cms), 'content.bin': content },
        );
        expect(checked.output).toContain('Verification successful');
        expect(checked.status).toBe(0);
      }
      return delivery;
    }

    it('2.1: Aadhaar page, a wrong OTP then the right one, and the browser carries the signed response to responseUrl', async () => {
      const input = requestInput('2.1');
      const start = await postForm(gatewayUrl, {
        eSignRequest: buildEsignRequest(input),
        aspTxnID: input.txn,
        'Content-Type': 'application/xml',
      });
      expect(start.status).toBe(200);
      expect(start.html).toContain('Lease &#60;Flat 4&#62; &#38; &#34;annexure&#34;');
      expect(start.html).not.toContain('<Flat 4>');
      let form = formOf(start.html);
      expect(form.action).toBe('/sandbox/esp/aadhaar');

      const badNumber = await postForm(`${gatewayUrl}/aadhaar`, {
        ...form.fields,
        aadhaar: '2341 2341 2345',
        consent: 'yes',
        action: 'continue',
      });
      expect(badNumber.status).toBe(400);
      expect(badNumber.html).toContain('aria-invalid="true" aria-describedby="aadhaar-error"');
      form = formOf(badNumber.html);

      const otpPage = await postForm(`${gatewayUrl}/aadhaar`, {
        ...form.fields,
        aadhaar: '2341 2341 2346',
        consent: 'yes',
        action: 'continue',
      });
      expect(otpPage.status).toBe(200);
      expect(otpPage.html).toContain('XXXXXX3210');
      form = formOf(otpPage.html);

      const wrong = await postForm(`${gatewayUrl}/authenticate`, { ...form.fields, otp: '000000', action: 'sign' });
      expect(wrong.status).toBe(400);
      expect(wrong.html).toContain('2 attempts left');
      form = formOf(wrong.html);

      const signed = await postForm(`${gatewayUrl}/authenticate`, { ...form.fields, otp: '123456', action: 'sign' });
      expect(signed.status).toBe(200);
      const back = formOf(signed.html);
      expect(back.action).toBe(input.responseUrl);
      expect(Object.keys(back.fields).sort()).toEqual(['eSignResponse', 'espTxnID']);
      // The browser's auto-submitted form, sent as the browser would.
      expect((await postForm(back.action, back.fields)).status).toBe(200);
      const delivery = await checkSigned(input.txn);
      expect(delivery.via).toBe('browser form');
      expect(delivery.espTxnId).toBe(parseAndVerifyEsignResponse(delivery.xml, espResponseSigner.certificatePem).resCode);
    });

    /** 3.2: the ASP's server POSTs the request XML; the gateway answers its signed acknowledgement at once. */
    async function acknowledgementOf(xml: string, as: 'xml' | 'url-encoded form body' = 'xml') {
      const answer = await fetch(gatewayUrl, {
        method: 'POST',
        headers: { 'content-type': as === 'xml' ? 'application/xml' : 'application/x-www-form-urlencoded' },
        body: as === 'xml' ? xml : encodeURIComponent(xml),
      });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toMatch(/^application\/xml/);
      const text = await answer.text();
      if (hasXmlsec1) expect(xmlsec1Verify(text, espResponseSigner.certificatePem).ok).toBe(true);
      return parseAndVerifyEsignAcknowledgement(text, espResponseSigner.certificatePem);
    }

    it('3.2: acknowledged at once; the browser opens the ESP’s page with txnref, the signer chooses the biometric capture; the response is POSTed server to server', async () => {
      const input = requestInput('3.2', {
        documents: [
          { id: '1', sha256Hex: contentHash, docInfo: 'Lease', docUrl: `${receiverUrl}/documents/lease.pdf?sig=a&b=c` },
        ],
      });
      const before = received.length;
      const ack = await acknowledgementOf(buildEsignRequest(input));
      expect(ack).toMatchObject({ status: '2', txn: input.txn });
      expect(ack.resCode).toMatch(/^[0-9a-f-]{36}$/);
      expect(received.length).toBe(before);

      // The browser, sent on with txnref (here a GET; a form POST works the same).
      const start = await fetch(`${gatewayUrl}/authpage?txnref=${encodeURIComponent(esignTxnRef(input.txn, ack.resCode))}`);
      const html = await start.text();
      expect(start.status).toBe(200);
      expect(html).toContain('name="authMode" value="2"');
      expect(html).toContain(`href="${receiverUrl}/documents/lease.pdf?sig=a&#38;b=c"`);
      let form = formOf(html);
      const capturePage = await postForm(`${gatewayUrl}/aadhaar`, {
        ...form.fields,
        aadhaar: '234123412346',
        authMode: '2',
        consent: 'yes',
        action: 'continue',
      });
      expect(capturePage.status).toBe(200);
      expect(capturePage.html).toContain('name="biometric"');
      form = formOf(capturePage.html);
      const wrong = await postForm(`${gatewayUrl}/authenticate`, { ...form.fields, biometric: 'not-a-match', action: 'sign' });
      expect(wrong.status).toBe(400);
      form = formOf(wrong.html);

      const signed = await postForm(`${gatewayUrl}/authenticate`, {
        ...form.fields,
        biometric: 'sandbox-biometric-ok',
        action: 'sign',
      });
      expect(signed.status).toBe(303);
      const location = new URL(signed.location!);
      expect(`${location.origin}${location.pathname}`).toBe(`${receiverUrl}/esign/back`);
      expect(location.searchParams.get('session')).toBe('s1');
      const delivery = await checkSigned(input.txn);
      expect(delivery.via).toBe('server post');
      const { resCode } = parseAndVerifyEsignResponse(delivery.xml, espResponseSigner.certificatePem);
      expect(resCode).toBe(ack.resCode);
      expect(Buffer.from(location.searchParams.get('txnref')!, 'base64').toString()).toBe(`${input.txn}|${resCode}`);
      // Answered: the txnref opens nothing any more.
      expect((await postForm(`${gatewayUrl}/authpage`, { txnref: esignTxnRef(input.txn, ack.resCode) })).status).toBe(400);
    });

    it('3.2: however the request arrives (a form field, base64, the URL-encoded body), it is acknowledged, never shown a page', async () => {
      const asField = requestInput('3.2');
      const fromBrowser = await postForm(gatewayUrl, {
        eSignRequest: Buffer.from(buildEsignRequest(asField)).toString('base64'),
        aspTxnID: asField.txn,
      });
      expect(fromBrowser.status).toBe(200);
      expect(fromBrowser.html).not.toContain('<form');
      expect(parseAndVerifyEsignAcknowledgement(fromBrowser.html, espResponseSigner.certificatePem)).toMatchObject({
        status: '2',
        txn: asField.txn,
      });
      const asBody = requestInput('3.2');
      expect(await acknowledgementOf(buildEsignRequest(asBody), 'url-encoded form body')).toMatchObject({
        status: '2',
        txn: asBody.txn,
      });
    });

    it('3.2: a foreign, stale or unknown request is refused in a signed acknowledgement, and nothing reaches responseUrl', async () => {
      const before = received.length;
      const foreign = requestInput('3.2', { signer: otherAsp });
      expect(await acknowledgementOf(buildEsignRequest(foreign))).toMatchObject({
        status: '0',
        txn: foreign.txn,
        errCode: GATEWAY_ERRORS.requestInvalid.errCode,
      });
      const stale = requestInput('3.2', { ts: new Date(Date.now() - 3_600_000) });
      expect(await acknowledgementOf(buildEsignRequest(stale))).toMatchObject({
        status: '0',
        txn: stale.txn,
        ...GATEWAY_ERRORS.requestStale,
      });
      for (const txnref of [esignTxnRef(stale.txn, 'made-up'), 'not base64 at all', '']) {
        const page = await postForm(`${gatewayUrl}/authpage`, { txnref });
        expect(page.status).toBe(400);
        expect(page.html).toContain('unknown or has expired');
      }
      expect(received.length).toBe(before);
    });

    it('three wrong OTPs end the transaction with a signed failure response; so does cancel', async () => {
      const input = requestInput('2.1');
      let form = formOf((await postForm(gatewayUrl, { eSignRequest: buildEsignRequest(input) })).html);
      form = formOf((await postForm(`${gatewayUrl}/aadhaar`, { ...form.fields, aadhaar: '456745674566', consent: 'yes' })).html);
      for (const left of [2, 1]) {
        const wrong = await postForm(`${gatewayUrl}/authenticate`, { ...form.fields, otp: '111111' });
        expect(wrong.html).toContain(`${left} attempt`);
        form = formOf(wrong.html);
      }
      const last = await postForm(`${gatewayUrl}/authenticate`, { ...form.fields, otp: '111111' });
      const back = formOf(last.html);
      await postForm(back.action, back.fields);
      expect((await acceptedResponse(input.txn)).response).toMatchObject({
        status: '0',
        ...GATEWAY_ERRORS.otpFailed,
        signatures: [],
      });

      const cancelled = requestInput('3.2');
      const { resCode } = await acknowledgementOf(buildEsignRequest(cancelled));
      const page = formOf((await postForm(`${gatewayUrl}/authpage`, { txnref: esignTxnRef(cancelled.txn, resCode) })).html);
      expect((await postForm(`${gatewayUrl}/aadhaar`, { ...page.fields, action: 'cancel' })).status).toBe(303);
      expect((await acceptedResponse(cancelled.txn)).response).toMatchObject({ status: '0', ...GATEWAY_ERRORS.cancelled });
    });

    it('2.1: refuses a request signed by another key with its own page, and tells no one; a stale one is answered to the ASP', async () => {
      const before = received.length;
      const foreign = await postForm(gatewayUrl, { eSignRequest: buildEsignRequest(requestInput('2.1', { signer: otherAsp })) });
      expect(foreign.status).toBe(400);
      expect(foreign.html).toContain('The eSign request was refused');
      expect(foreign.html).not.toContain('<form');
      const doctype = await postForm(gatewayUrl, {
        eSignRequest: '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><Esign>&e;</Esign>',
      });
      expect(doctype.status).toBe(400);
      expect(doctype.html).not.toContain('root:');
      expect((await postForm(gatewayUrl, {})).status).toBe(400);
      expect(received.length).toBe(before);

      const stale = requestInput('2.1', { ts: new Date(Date.now() - 3_600_000) });
      const back = formOf((await postForm(gatewayUrl, { eSignRequest: buildEsignRequest(stale) })).html);
      expect(back.action).toBe(stale.responseUrl);
      await postForm(back.action, back.fields);
      expect((await acceptedResponse(stale.txn)).response).toMatchObject({ status: '0', ...GATEWAY_ERRORS.requestStale });
    });

    it('refuses a tampered page state', async () => {
      const form = formOf((await postForm(gatewayUrl, { eSignRequest: buildEsignRequest(requestInput('2.1')) })).html);
      const state = form.fields.state!;
      const tampered = `${state.slice(0, -4)}${state.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      const answer = await postForm(`${gatewayUrl}/aadhaar`, { state: tampered, aadhaar: '234123412346', consent: 'yes' });
      expect(answer.status).toBe(400);
      expect(answer.html).toContain('no longer valid');
    });
  });
});
