import { createHash } from 'node:crypto';
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { createSession, sessionBody, signAsAadhaar, signatureAt, signerInput, uploadPdf } from '../helpers/factories';
import { hasOpenssl, openssl } from '../helpers/openssl';
import { hasPdfsig, hasQpdf, pdfsigReport, qpdfCheck } from '../helpers/pdf-signatures';
import { sandboxRootCa } from '../../src/modules/sandbox/sandbox-ca';

/** The streams of the catalog's /DSS, decoded. */
async function dssOf(pdf: Buffer): Promise<Record<'Certs' | 'OCSPs' | 'CRLs', Buffer[]>> {
  const doc = await PDFDocument.load(pdf);
  const dss = doc.catalog.lookup(PDFName.of('DSS'), PDFDict);
  const streams = (key: string) =>
    (dss.lookupMaybe(PDFName.of(key), PDFArray)?.asArray() ?? []).map((ref) =>
      Buffer.from(decodePDFRawStream(doc.context.lookup(ref) as PDFRawStream).decode()),
    );
  return { Certs: streams('Certs'), OCSPs: streams('OCSPs'), CRLs: streams('CRLs') };
}

describe('PAdES B-LT and B-LTA on completion (PADES_LTV=true)', () => {
  let app: TestApp;
  let owner: TestUser;
  let finalPdf: Buffer;
  let report: any;
  let rootPem: string;

  beforeAll(async () => {
    app = await startTestApp({ env: { PADES_LTV: 'true' } });
    owner = await app.createUser();
    rootPem = (await sandboxRootCa(app.services, app.services.orm.em.fork())).certificatePem;
    const file = await uploadPdf(app, owner.token);
    const session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [
          signerInput({ full_name: 'Asha Rao', sign_type: 'aadhaar', elements: [signatureAt(0, 72, 640)] }),
          signerInput({ full_name: 'Esign Platform', elements: [signatureAt(0, 72, 500)] }),
        ],
      }),
    );
    const [aadhaar, suresign] = session.signers;
    expect((await signAsAadhaar(app, aadhaar!.token)).status).toBe(200);
    const last = await signerApi(app, 'POST', '/sign', suresign!.token, { consent: true });
    expect(last.status, JSON.stringify(last.body)).toBe(200);

    const link = await rest<any>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    finalPdf = Buffer.from(await (await fetch(link.body.data.url)).arrayBuffer());
    report = (await rest<any>(app, 'GET', '/esign/verify', { token: owner.token, query: { client_id: session.client_id } })).body
      .data;
  });
  afterAll(async () => app.close());

  it('reports both signatures at B-LTA, with good revocation data from the embedded OCSP answers, and a valid document time-stamp', () => {
    expect(report.all_valid, JSON.stringify(report.signatures.map((s: any) => s.problems))).toBe(true);
    expect(report.signatures).toHaveLength(3);
    const [first, second, stamp] = report.signatures;
    for (const signature of [first, second]) {
      expect(signature).toMatchObject({
        pades_level: 'B-LTA',
        revocation: { status: 'good', source: 'ocsp' },
        certificate_chain_valid: true,
      });
    }
    expect(stamp).toMatchObject({
      sub_filter: 'ETSI.RFC3161',
      digest_valid: true,
      signature_valid: true,
      certificate_chain_valid: true,
      covers_whole_document: true,
      pades_level: null,
      timestamp: { valid: true, tsa: expect.stringContaining('Time-Stamping Authority') },
    });
    expect(second.changes_after.join('\n')).toMatch(/DocTimeStamp|signature of field DocTimeStamp-/);
  });

  it('embeds every certificate of every chain and an OCSP answer for each one below the root, which openssl verifies', async () => {
    const dss = await dssOf(finalPdf);
    // Two signers' chains and the TSA's: the document signer, the Aadhaar certificate, the ESP CA, the TSA, the root.
    expect(dss.Certs.length).toBe(5);
    expect(dss.OCSPs.length).toBe(4);
    expect(dss.CRLs).toHaveLength(0);
    if (hasOpenssl) {
      for (const response of dss.OCSPs) {
        const { output: text } = await openssl(['ocsp', '-respin', 'r.der', '-resp_text', '-CAfile', 'root.pem', '-no_nonce'], {
          'r.der': response,
          'root.pem': rootPem,
        });
        expect(text).toContain('Response verify OK');
        expect(text).toContain('Cert Status: good');
      }
    }
  });

  it('the document time-stamp covers the whole file, the /DSS included; openssl verifies it', async () => {
    const stamp = report.signatures[2];
    const [a, b, c, d] = stamp.byte_range;
    expect(c + d).toBe(finalPdf.length);
    if (!hasOpenssl) return;
    const digest = createHash('sha256')
      .update(finalPdf.subarray(a, a + b))
      .update(finalPdf.subarray(c, c + d))
      .digest('hex');
    const token = Buffer.from(finalPdf.toString('latin1', b + 1, c - 1), 'hex');
    const end =
      2 + (token[1]! & 0x80 ? token[1]! & 0x7f : 0) + (token[1]! & 0x80 ? token.readUIntBE(2, token[1]! & 0x7f) : token[1]!);
    const { output: verdict } = await openssl(
      ['ts', '-verify', '-token_in', '-in', 'token.der', '-digest', digest, '-CAfile', 'root.pem'],
      {
        'token.der': token.subarray(0, end),
        'root.pem': rootPem,
      },
    );
    expect(verdict).toContain('Verification: OK');
  });

  it('outside readers: qpdf --check is clean and pdfsig finds both signatures valid', () => {
    if (hasQpdf) qpdfCheck(finalPdf);
    if (hasPdfsig) {
      // pdfsig lists the document time-stamp last, over the whole file; poppler cannot validate one (type "unknown").
      const entries = pdfsigReport(finalPdf);
      expect(entries.map((entry) => entry.kind)).toEqual(['signature', 'signature', 'document-timestamp']);
      expect(entries[0]!.valid && entries[1]!.valid).toBe(true);
      expect(entries[2]!.total).toBe(true);
    }
  });
});
