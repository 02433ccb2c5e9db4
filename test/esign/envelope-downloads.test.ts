import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signedDocumentNames, signedZipName } from '../../src/modules/esign/file-names';
import type { BlobStore } from '../../src/platform/storage/blob-store';
import { zipOfBlobs } from '../../src/platform/storage/zip-bundle';
import { EsignDocumentDownloadsDocument } from '../__generated__/graphql';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { gql, rest, signerApi } from '../helpers/clients';
import { corpusFile } from '../helpers/fixtures';
import {
  createSession,
  FOUR_PAGE_PDF,
  sessionBody,
  signatureAt,
  signerInput,
  uploadPdf,
  type SessionJson,
} from '../helpers/factories';
import { pdfsigReport } from '../helpers/pdf-signatures';

const THIRD_PDF = corpusFile('002-trivial-libre-office-writer/002-trivial-libre-office-writer.pdf');
const NOT_COMPLETED = { success: false, status_code: 404, message: 'Esign not completed.', data: null };

// Answers are checked field by field against what the route documents.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The archive as Info-ZIP's unzip reads it: its CRC check, its names in order, and each entry's bytes. */
function unzipped(zip: Buffer): { test: string; names: string[]; entries: Buffer[] } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'envelope-zip-'));
  try {
    const file = path.join(dir, 'documents.zip');
    writeFileSync(file, zip);
    const env = { ...process.env, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
    const test = spawnSync('unzip', ['-t', file], { encoding: 'utf8', env });
    expect(test.status, test.stdout + test.stderr).toBe(0);
    const listed = spawnSync('zipinfo', ['-1', file], { encoding: 'utf8', env });
    expect(listed.status, listed.stderr).toBe(0);
    const names = listed.stdout.split('\n').filter(Boolean);
    // `unzip -p` with the name as a pattern: its wildcards are escaped.
    const entries = names.map((name) => {
      const read = spawnSync('unzip', ['-p', file, name.replace(/[[\]*?\\]/g, '\\$&')], { env, maxBuffer: 64 << 20 });
      expect(read.status, String(read.stderr)).toBe(0);
      return read.stdout;
    });
    return { test: test.stdout, names, entries };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Envelope downloads (issue "Envelopes"): `GET /api/v1/esign/download-documents` links every signed document of a
 * completed session and a ZIP of them all, made as it is downloaded; `GET /api/v1/esign/verify` reports each
 * document. download-pdf keeps answering the first document.
 */
describe('envelope downloads: every signed document, one by one and as a ZIP', () => {
  let app: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let envelope: SessionJson;
  let pending: SessionJson;
  let single: SessionJson;

  const bytesAt = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());
  const documentsOf = async (clientId: string): Promise<Json[]> =>
    (await rest<Json[]>(app, 'GET', '/esign/documents', { token: owner.token, query: { client_id: clientId } })).body.data!;
  const fileBytes = async (fileId: string) => {
    const details = await rest<Json>(app, 'GET', '/files/details', { token: owner.token, query: { client_id: fileId } });
    return bytesAt(details.body.data.download_url);
  };
  const downloads = (token: string, clientId: string) =>
    rest<Json>(app, 'GET', '/esign/download-documents', { token, query: { client_id: clientId } });
  const sign = async (session: SessionJson) => {
    for (const signer of session.signers) {
      const signed = await signerApi(app, 'POST', '/sign', signer.token, { consent: true });
      expect(signed.status, JSON.stringify(signed.body)).toBe(200);
    }
  };

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    other = await app.createUser();
    const files = [
      await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'agreement.pdf'),
      await uploadPdf(app, owner.token, FOUR_PAGE_PDF, 'agreement-copy.pdf'),
      await uploadPdf(app, owner.token, THIRD_PDF, 'schedule.pdf'),
    ];
    // Two names that download the same, and one that is no safe file name.
    const documents = [
      { file_id: files[0], name: 'Loan agreement' },
      { file_id: files[1], name: 'loan agreement' },
      { file_id: files[2], name: '../Annexé: 1' },
    ];
    const signers = [
      signerInput({ elements: [signatureAt(0), { ...signatureAt(1), document: 1 }, { ...signatureAt(0), document: 2 }] }),
      signerInput({ full_name: 'Vikram Singh', email: 'vikram@example.com', elements: [{ ...signatureAt(2), document: 1 }] }),
    ];
    envelope = await createSession(app, owner.token, { sign_type: 'suresign', documents, signers });
    await sign(envelope);
    pending = await createSession(app, owner.token, { sign_type: 'suresign', documents, signers });
    single = await createSession(app, owner.token, sessionBody(files[0]!));
    await sign(single);
  });
  afterAll(async () => app?.close());

  it('links each signed document: the bytes of its current PDF, every signature valid to pdfsig', async () => {
    const answer = await downloads(owner.token, envelope.client_id);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const data = answer.body.data;
    const documents = await documentsOf(envelope.client_id);
    expect(data).toMatchObject({
      client_id: envelope.client_id,
      expires_in: 300,
      zip_url: expect.stringContaining('/downloads/'),
    });
    expect(data.documents.map((d: Json) => [d.document_id, d.position, d.name, d.filename])).toEqual([
      [documents[0].document_id, 0, 'Loan agreement', 'Loan agreement-signed.pdf'],
      [documents[1].document_id, 1, 'loan agreement', 'loan agreement-signed-2.pdf'],
      [documents[2].document_id, 2, '../Annexé: 1', '_Annexé_ 1-signed.pdf'],
    ]);
    const expectedSignatures = [1, 2, 1];
    for (const [position, link] of data.documents.entries()) {
      expect(link).toMatchObject({ url: expect.stringContaining('/downloads/'), expires_in: 300 });
      const response = await fetch(link.url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/pdf');
      expect(response.headers.get('content-disposition')).toContain(`filename*=UTF-8''${encodeURIComponent(link.filename)}`);
      const pdf = Buffer.from(await response.arrayBuffer());
      expect(pdf.equals(await fileBytes(documents[position].current_pdf_file_id)), link.name).toBe(true);
      const signatures = pdfsigReport(pdf).filter((entry) => entry.kind === 'signature');
      expect(signatures).toHaveLength(expectedSignatures[position]!);
      expect(signatures.every((entry) => entry.valid)).toBe(true);
    }

    // download-pdf answers as before: the first document.
    const first = await rest<Json>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: envelope.client_id },
    });
    expect(first.body.data).toEqual({ url: expect.stringContaining('/downloads/'), expires_in: 300 });
    expect((await bytesAt(first.body.data.url)).equals(await bytesAt(data.documents[0].url))).toBe(true);
  });

  it('links a ZIP of them all, made as it is downloaded: unzip checks it and reads each document back', async () => {
    const { documents: links, zip_url } = (await downloads(owner.token, envelope.client_id)).body.data;
    const response = await fetch(zip_url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/zip');
    expect(response.headers.get('content-disposition')).toBe(
      `attachment; filename="Loan agreement-signed.zip"; filename*=UTF-8''${encodeURIComponent('Loan agreement-signed.zip')}`,
    );
    expect(response.headers.get('cache-control')).toBe('private, no-store');
    const zip = Buffer.from(await response.arrayBuffer());
    const { test, names, entries } = unzipped(zip);
    expect(test).toContain('No errors detected');
    expect(names).toEqual(links.map((link: Json) => link.filename));
    for (const [position, link] of links.entries()) {
      expect(entries[position]!.equals(await bytesAt(link.url)), link.filename).toBe(true);
    }

    // The grant is signed: a changed link is refused, as every download link.
    const [payload, signature] = zip_url.split('/downloads/')[1].split('.');
    const forged = await fetch(zip_url.replace(`${payload}.${signature}`, `${payload}.${signature.slice(0, -2)}AA`));
    expect(forged.status).toBe(403);
  });

  it('answers the same over GraphQL', async () => {
    const response = await gql(app, owner.token, EsignDocumentDownloadsDocument, { client_id: envelope.client_id });
    expect(response.errors).toBeUndefined();
    const viaRest = (await downloads(owner.token, envelope.client_id)).body.data;
    const withoutUrls = (answer: Json) => ({
      ...answer,
      zip_url: undefined,
      documents: answer.documents.map((document: Json) => ({ ...document, url: undefined })),
    });
    expect(withoutUrls(response.data!.esignDocumentDownloads)).toEqual(withoutUrls(viaRest));
    const zip = await bytesAt(response.data!.esignDocumentDownloads.zip_url);
    expect(unzipped(zip).names).toHaveLength(3);
  });

  it('a session not completed, another user’s and an unknown one: 404 Esign not completed., as download-pdf', async () => {
    for (const [token, clientId] of [
      [owner.token, pending.client_id],
      [other.token, envelope.client_id],
      [owner.token, 'esign_0123456789abcdef0123456789abcdef'],
    ] as const) {
      const answer = await downloads(token, clientId);
      expect(answer.status).toBe(404);
      expect(answer.body).toMatchObject(NOT_COMPLETED);
      const graphql = await gql(app, token, EsignDocumentDownloadsDocument, { client_id: clientId });
      expect(graphql.errors?.[0]).toMatchObject({ message: 'Esign not completed.', extensions: { code: 'not_found' } });
    }
    expect((await rest(app, 'GET', '/esign/download-documents', { token: owner.token })).status).toBe(400);
  });

  it('verify reports each document, the first one also at the top as before', async () => {
    const answer = await rest<Json>(app, 'GET', '/esign/verify', {
      token: owner.token,
      query: { client_id: envelope.client_id },
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const report = answer.body.data;
    const documents = await documentsOf(envelope.client_id);
    expect(report.documents.map((d: Json) => [d.document_id, d.position, d.name, d.file_id])).toEqual(
      documents.map((d) => [d.document_id, d.position, d.name, d.current_pdf_file_id]),
    );
    const signers = envelope.signers.map((signer) => signer.signer_id);
    const signedBy = [[signers[0]], [signers[0], signers[1]], [signers[0]]];
    for (const [position, document] of report.documents.entries()) {
      expect(document.all_valid, document.name).toBe(true);
      const signatures = document.signatures.filter((s: Json) => s.sub_filter !== 'ETSI.RFC3161');
      expect(signatures.map((s: Json) => s.field_name)).toEqual(signedBy[position]);
      expect(signatures.every((s: Json) => s.digest_valid && s.signature_valid && s.pades_level === 'B-LTA')).toBe(true);
      expect(document.document_bytes).toBe((await fileBytes(document.file_id)).length);
    }
    const { document_id, position, name, ...first } = report.documents[0];
    expect([document_id, position, name]).toEqual([documents[0].document_id, 0, 'Loan agreement']);
    const { client_id, documents: _all, ...top } = report;
    expect(client_id).toBe(envelope.client_id);
    expect(top).toEqual(first);
  });

  it('a one-document session: one link, the bytes download-pdf gives; verify lists the one document', async () => {
    const answer = await downloads(owner.token, single.client_id);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.data.documents.map((d: Json) => [d.position, d.name, d.filename])).toEqual([
      [0, 'agreement.pdf', 'agreement-signed.pdf'],
    ]);
    const pdf = await rest<Json>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: single.client_id },
    });
    expect((await bytesAt(pdf.body.data.url)).equals(await bytesAt(answer.body.data.documents[0].url))).toBe(true);
    expect(unzipped(await bytesAt(answer.body.data.zip_url)).names).toEqual(['agreement-signed.pdf']);

    const report = (await rest<Json>(app, 'GET', '/esign/verify', { token: owner.token, query: { client_id: single.client_id } }))
      .body.data;
    expect(report.file_id).toBe(
      (await rest<Json>(app, 'GET', '/esign/details', { token: owner.token, query: { client_id: single.client_id } })).body.data
        .current_pdf_file_id,
    );
    expect(report.documents).toHaveLength(1);
    const { document_id: _id, position: _position, name: _name, ...only } = report.documents[0];
    const { client_id: _client, documents: _documents, ...top } = report;
    expect(top).toEqual(only);
    expect(report.all_valid).toBe(true);
  });
});

describe('signed documents’ download names', () => {
  it('are safe file names, unique without regard to case, `document-N` when nothing is left', () => {
    expect(
      signedDocumentNames([
        'Contract.pdf',
        'contract',
        'CONTRACT.PDF',
        'a/b\\c:d*e?f"g<h>i|j',
        'x\u202Efdp.exe',
        'tab\there\u0000',
        ' ..hidden.. ',
        '...',
        'é'.repeat(300),
      ]),
    ).toEqual([
      'Contract-signed.pdf',
      'contract-signed-2.pdf',
      'CONTRACT-signed-3.pdf',
      'a_b_c_d_e_f_g_h_i_j-signed.pdf',
      'x_fdp.exe-signed.pdf',
      'tab_here_-signed.pdf',
      'hidden-signed.pdf',
      'document-8-signed.pdf',
      `${'é'.repeat(120)}-signed.pdf`,
    ]);
    // The ZIP's name, from the session's (the first document's), the same way.
    expect([signedZipName('contract.pdf'), signedZipName('../Q3: report'), signedZipName('..')]).toEqual([
      'contract-signed.zip',
      '_Q3_ report-signed.zip',
      'documents-signed.zip',
    ]);
  });
});

describe('the ZIP of a bundle grant (zipOfBlobs)', () => {
  it('is made as it is read: a blob is opened when the reader reaches it, each chunk passed on as it comes', async () => {
    const opened: string[] = [];
    const blobs = {
      getStream: async (key: string) => {
        opened.push(key);
        return Readable.from([Buffer.from(`${key} first chunk;`), Buffer.from(`${key} second chunk`)]);
      },
    } as unknown as BlobStore;
    const zip = zipOfBlobs(blobs, [
      { key: 'files/a', filename: 'a-signed.pdf' },
      { key: 'files/b', filename: 'b-signed.pdf' },
    ]);
    const chunks: Uint8Array[] = [];
    const first = await zip.next();
    chunks.push(first.value as Uint8Array);
    expect(opened).toEqual(['files/a']);
    for await (const chunk of zip) chunks.push(chunk);
    expect(opened).toEqual(['files/a', 'files/b']);
    const { names, entries } = unzipped(Buffer.concat(chunks));
    expect(names).toEqual(['a-signed.pdf', 'b-signed.pdf']);
    expect(entries.map(String)).toEqual(['files/a first chunk;files/a second chunk', 'files/b first chunk;files/b second chunk']);
  });
});
