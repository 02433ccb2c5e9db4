import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { espResponseCertificate } from '../../src/modules/signing/esp/esp-adapter';
import { buildEsignResponse, parseAndVerifyEsignResponse } from '../../src/modules/signing/esp/cca/esign-response';
import { platformKey } from '../../src/modules/signing/platform-keys';
import { expireDueEspTransactions } from '../../src/modules/signer-journey/aadhaar/esp-outcomes';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { rest, signerApi } from '../helpers/clients';
import { initializeEsign, postForm, signAsAadhaar, signatureAt, signerInput, throughEsp, uploadPdf } from '../helpers/factories';
import { corpusFile, MINIMAL_PDF } from '../helpers/fixtures';

/** Six different PDFs: the same bytes would give the same InputHash, and a swapped signature would still fit. */
const PDFS = [
  MINIMAL_PDF,
  corpusFile('002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf'),
  corpusFile('004-pdflatex-4-pages/pdflatex-4-pages.pdf'),
  corpusFile('011-google-doc-document/google-doc-document.pdf'),
  corpusFile('022-pdfkit/pdfkit.pdf'),
  corpusFile('003-pdflatex-image/pdflatex-image.pdf'),
];
import { pdfsigReport, qpdfCheck } from '../helpers/pdf-signatures';

/**
 * An Aadhaar signer of an envelope signs all their documents with their ESP or none of them: one InputHash per
 * document in one transaction, up to five; more go in batches of five, one authentication each, recorded together
 * with the last. The sandbox ESP's gateway is reached over HTTP exactly as a real ESP would be; where a test needs a
 * misbehaving ESP, it rewrites the gateway's answer and signs it with the ESP's response key.
 */
describe('envelopes: Aadhaar signing of several documents, all or nothing', () => {
  let app: TestApp;
  let owner: TestUser;
  let files: string[];

  beforeAll(async () => {
    app = await startTestApp({ env: { ESP_SANDBOX_TIMEOUT_SECONDS: '600' } });
    owner = await app.createUser();
    files = [];
    for (const [index, pdf] of PDFS.entries()) files.push(await uploadPdf(app, owner.token, pdf, `doc-${index + 1}.pdf`));
  });
  afterAll(async () => app.close());

  const sql = <T>(query: string, params: unknown[] = []) =>
    app.services.orm.em.fork().getConnection().execute<T[]>(query, params);
  const documentsOf = async (clientId: string) =>
    (await rest<any[]>(app, 'GET', '/esign/documents', { token: owner.token, query: { client_id: clientId } })).body.data!;
  const auditOf = async (clientId: string) =>
    (await rest<any>(app, 'GET', '/esign/audit', { token: owner.token, query: { client_id: clientId } })).body.data.events as {
      event: string;
      details: any;
    }[];
  const fileBytes = async (fileId: string) => {
    const details = await rest<any>(app, 'GET', '/files/details', { token: owner.token, query: { client_id: fileId } });
    return Buffer.from(await (await fetch(details.body.data.download_url)).arrayBuffer());
  };
  const viewOf = async (token: string) => (await signerApi(app, 'GET', '/session', token)).body.data;

  /** An envelope of `count` documents with one Aadhaar signer who signs each (a signature box on every first page). */
  async function aadhaarEnvelope(count: number, signer: Record<string, unknown> = {}) {
    const created = await initializeEsign(app, owner.token, {
      sign_type: 'aadhaar',
      documents: files.slice(0, count).map((file_id, index) => ({ file_id, name: `Document ${index + 1}` })),
      signers: [
        signerInput({
          full_name: 'Asha Rao',
          elements: Array.from({ length: count }, (_, document) => ({ ...signatureAt(0), document })),
          ...signer,
        }),
      ],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return { clientId: created.body.data!.client_id as string, token: created.body.data!.signers[0]!.token as string };
  }

  it('six documents: two ESP transactions (five and one), the first held until the second, then every document signed', async () => {
    const { clientId, token } = await aadhaarEnvelope(6);
    expect((await viewOf(token)).signer.esp_batches).toBe(2);

    const first = await signAsAadhaar(app, token);
    expect(first.status).toBe(409);
    expect(first.body.data.signer.esp_transaction).toMatchObject({
      status: 'held',
      batch: { number: 1, of: 2, documents: 5 },
    });
    // Held: nothing is in the documents yet (their current PDFs are the prepared ones), the signer is still to sign.
    const held = await documentsOf(clientId);
    expect(held.map((document) => document.status)).toEqual(Array(6).fill('pending'));
    for (const document of held)
      expect(pdfsigReport(await fileBytes(document.current_pdf_file_id)).filter((entry) => entry.valid)).toEqual([]);
    expect((await auditOf(clientId)).some((event) => event.event === 'signed')).toBe(false);
    expect(first.body.data.signer.status).toBe('pending');

    const second = await signAsAadhaar(app, token);
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body.data.signer.esp_transaction.batch).toEqual({ number: 2, of: 2, documents: 1 });

    const transactions = await sql<{ batch: number; batch_count: number; status: string; documents: any[] }>(
      'select batch, batch_count, status, documents from esp_transactions where session_id = ? order by batch',
      [clientId],
    );
    expect(transactions.map((row) => [row.batch, row.batch_count, row.status, row.documents.map((d) => d.position)])).toEqual([
      [1, 2, 'completed', [0, 1, 2, 3, 4]],
      [2, 2, 'completed', [5]],
    ]);
    // The held batch's signed PDFs are spent once recorded.
    for (const document of transactions[0]!.documents)
      await expect(app.services.blobs.getBytes(document.signed_key)).rejects.toThrow();

    const after = await documentsOf(clientId);
    expect(after.map((document) => document.status)).toEqual(Array(6).fill('completed'));
    for (const [position, document] of after.entries()) {
      expect(document.current_pdf_file_id).not.toBe(held[position].current_pdf_file_id);
      const pdf = await fileBytes(document.current_pdf_file_id);
      qpdfCheck(pdf);
      const report = pdfsigReport(pdf);
      const signatures = report.filter((entry) => entry.kind === 'signature');
      expect(signatures, document.name).toHaveLength(1);
      expect(signatures[0]!.valid).toBe(true);
      expect(report.some((entry) => entry.kind === 'document-timestamp')).toBe(true);
    }
    const audit = await auditOf(clientId);
    expect(audit.filter((event) => event.event === 'esp_batch_held').map((event) => event.details.batch)).toEqual([1]);
    const signed = audit.filter((event) => event.event === 'signed');
    expect(signed).toHaveLength(1);
    expect(signed[0]!.details.documents).toHaveLength(6);
  });

  it('a later batch that does not go through voids the held one: the signer starts again from the first batch', async () => {
    const { clientId, token } = await aadhaarEnvelope(6);
    expect((await signAsAadhaar(app, token)).body.data.signer.esp_transaction.status).toBe('held');
    const cancelled = await signAsAadhaar(app, token, { cancel: true });
    expect(cancelled.body.data.signer.esp_transaction).toMatchObject({ status: 'failed', cancelled_by_signer: true });
    const audit = await auditOf(clientId);
    expect(audit.filter((event) => event.event === 'esp_batches_voided')).toHaveLength(1);
    expect(audit.some((event) => event.event === 'signed')).toBe(false);
    const rows = await sql<{ status: string; error_code: string }>(
      `select status, error_code from esp_transactions where session_id = ? and batch = 1 order by created_at`,
      [clientId],
    );
    expect(rows).toEqual([{ status: 'expired', error_code: 'esp_batch_voided' }]);

    // Starting again is the first batch again, and both batches then sign every document.
    const again = await signAsAadhaar(app, token);
    expect(again.body.data.signer.esp_transaction).toMatchObject({ status: 'held', batch: { number: 1, of: 2 } });
    expect((await signAsAadhaar(app, token)).status).toBe(200);
    expect((await documentsOf(clientId)).every((document) => document.status === 'completed')).toBe(true);
  });

  it('a held batch whose next batch does not come in time is voided by the sweep, its signed PDFs deleted', async () => {
    const { clientId, token } = await aadhaarEnvelope(6);
    expect((await signAsAadhaar(app, token)).body.data.signer.esp_transaction.status).toBe('held');
    const [held] = await sql<{ txn: string; documents: any[] }>(
      `select txn, documents from esp_transactions where session_id = ? and status = 'held'`,
      [clientId],
    );
    await sql(`update esp_transactions set expires_at = now() - interval '1 second' where txn = ?`, [held!.txn]);
    expect((await viewOf(token)).signer.esp_transaction).toMatchObject({ status: 'expired', error_code: 'esp_batch_voided' });
    expect(await expireDueEspTransactions(app.services, app.services.orm.em.fork(), 100)).toBeGreaterThanOrEqual(1);
    const [after] = await sql<{ status: string; error_code: string }>(
      'select status, error_code from esp_transactions where txn = ?',
      [held!.txn],
    );
    expect(after).toEqual({ status: 'expired', error_code: 'esp_batch_voided' });
    for (const document of held!.documents) await expect(app.services.blobs.getBytes(document.signed_key)).rejects.toThrow();
    // The next start is the first batch again.
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.body.data.batch).toEqual({ number: 1, of: 2, documents: 5 });
  });

  it('a held batch waits as long as the next batch may take', async () => {
    const { clientId, token } = await aadhaarEnvelope(6);
    expect((await signAsAadhaar(app, token)).body.data.signer.esp_transaction.status).toBe('held');
    // The held batch's window would end before the next one's: starting the next keeps it as long.
    await sql(`update esp_transactions set expires_at = now() + interval '30 seconds' where session_id = ? and status = 'held'`, [
      clientId,
    ]);
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.body.data.batch).toMatchObject({ number: 2, of: 2 });
    const rows = await sql<{ status: string; expires_at: Date }>(
      `select status, expires_at from esp_transactions where session_id = ? and status in ('held', 'pending')`,
      [clientId],
    );
    const held = rows.find((row) => row.status === 'held')!;
    const pending = rows.find((row) => row.status === 'pending')!;
    expect(new Date(held.expires_at).getTime()).toBeGreaterThanOrEqual(new Date(pending.expires_at).getTime());
  });

  it('an ESP that signs one of three hashes wrongly: the whole transaction is refused, no document is signed', async () => {
    const { clientId, token } = await aadhaarEnvelope(3, { max_retry: 3 });
    const started = await signerApi(app, 'POST', '/esp/start', token, { consent: true });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    // The documents as prepared for signing (the start prepares them): the refused answer must leave them so.
    const before = (await documentsOf(clientId)).map((document) => document.current_pdf_file_id);
    expect(started.body.data.batch).toEqual({ number: 1, of: 1, documents: 3 });
    const { back } = await throughEsp(started.body.data.esp_url, started.body.data.fields, { holdResponse: true });
    const em = app.services.orm.em.fork();
    const genuine = parseAndVerifyEsignResponse(
      back!.fields.eSignResponse!,
      await espResponseCertificate(app.services, em, app.services.config.esps.sandbox!),
    );
    expect(genuine.signatures.map((signature) => signature.id)).toEqual(['1', '2', '3']);
    // The second InputHash answered with the first document's signature: a valid PKCS#7, over the wrong hash.
    const espKey = await platformKey(app.services, em, 'sandbox-esp-response-signer', () => {
      throw new Error('the sandbox ESP key exists by now');
    });
    const wrong = buildEsignResponse({
      version: '2.1',
      txn: genuine.txn,
      resCode: genuine.resCode,
      status: 'success',
      userCertificatePem: genuine.userCertificatePem,
      signatures: genuine.signatures.map((signature) => ({
        id: signature.id,
        cms: signature.id === '2' ? genuine.signatures[0]!.cms : signature.cms,
      })),
      signer: espKey,
    });
    expect((await postForm(back!.action, { ...back!.fields, eSignResponse: wrong })).status).toBe(303);

    const view = await viewOf(token);
    expect(view.signer.esp_transaction).toMatchObject({ status: 'failed', error_code: 'esp_signature_invalid' });
    expect(view.signer.esp_transaction.error_message).toContain('InputHash 2');
    expect(view.signer.attempts_left).toBe(2);
    expect((await documentsOf(clientId)).map((document) => document.current_pdf_file_id)).toEqual(before);
    expect((await auditOf(clientId)).some((event) => event.event === 'signed')).toBe(false);

    // A genuine answer afterwards signs all three.
    expect((await signAsAadhaar(app, token)).status).toBe(200);
    expect((await documentsOf(clientId)).every((document) => document.status === 'completed')).toBe(true);
  });
});
