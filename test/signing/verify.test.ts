import { PDFDict, PDFDocument, PDFName, PDFNumber, PDFRef } from 'pdf-lib';
import { startTestApp, type TestApp, type TestUser } from '../helpers/app';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { platformSigningIdentity } from '../../src/modules/signing/platform-identity';
import { verifyPdfSignatures, type DocumentVerification } from '../../src/modules/signing/verify/verify-document';
import { EsignVerificationDocument } from '../__generated__/graphql';
import { gql, rest, type Envelope } from '../helpers/clients';
import { createSession, sessionBody, signatureAt, signerInput, uploadPdf, type SessionJson } from '../helpers/factories';
import { SANDBOX_TSA_POLICY } from '../../src/modules/sandbox/tsa/sandbox-tsa';
import { createRootCa } from '../../src/modules/signing/certificates';
import { hasQpdf, longTermTailProblems, qpdfCheck } from '../helpers/pdf-signatures';

/** The text esign/details answers for a session that is not the caller's. */
const SESSION_NOT_FOUND = 'Esign client with the given client_id not found';

interface Report extends DocumentVerification {
  client_id: string;
  file_id: string;
}

/** An entry of a hand-written cross-reference section: in use at an offset, or free. */
type XrefEntry = { number: number; offset: number } | { number: number; free: true };

/**
 * Appends one classic incremental update (objects, xref section, trailer with /Prev) after the last %%EOF. The
 * section lists the objects written, unless `xref` says what it lists instead (to forge one).
 */
function appendUpdate(
  pdf: Buffer,
  objects: { number: number; body: string }[],
  trailer: { size: number; root: string },
  xref?: (written: Map<number, number>) => XrefEntry[],
): Buffer {
  const startxref = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(pdf.toString('latin1'))![1];
  let text = '\n';
  const offsets = new Map<number, number>();
  for (const object of objects) {
    offsets.set(object.number, pdf.length + Buffer.byteLength(text, 'latin1'));
    text += `${object.number} 0 obj\n${object.body}\nendobj\n`;
  }
  const xrefOffset = pdf.length + Buffer.byteLength(text, 'latin1');
  const entries = xref ? xref(offsets) : [...offsets].map(([number, offset]) => ({ number, offset }));
  const sections = [...entries]
    .sort((a, b) => a.number - b.number)
    .map((entry) =>
      'free' in entry
        ? `${entry.number} 1\n0000000000 00001 f\r`
        : `${entry.number} 1\n${String(entry.offset).padStart(10, '0')} 00000 n\r`,
    );
  text += `xref\n${sections.join('\n')}\ntrailer\n<< /Size ${trailer.size} /Root ${trailer.root} /Prev ${startxref} >>\nstartxref\n${xrefOffset}\n%%EOF\n`;
  return Buffer.concat([pdf, Buffer.from(text, 'latin1')]);
}

/** Where each version of an object starts in the file (`N 0 obj` at the start of a line), oldest first. */
function objectOffsets(pdf: Buffer, number: number): number[] {
  const offsets: number[] = [];
  const pattern = new RegExp(`(^|[\\r\\n])${number} 0 obj\\b`, 'g');
  for (const match of pdf.toString('latin1').matchAll(pattern)) offsets.push(match.index! + match[1].length);
  return offsets;
}

function flipByte(pdf: Buffer, at: number): Buffer {
  const copy = Buffer.from(pdf);
  copy[at] ^= 0x01;
  return copy;
}

function covers(byteRange: number[], at: number): boolean {
  return (at >= byteRange[0] && at < byteRange[0] + byteRange[1]) || (at >= byteRange[2] && at < byteRange[2] + byteRange[3]);
}

describe('signature verification report (GET /api/v1/esign/verify, esignVerification)', () => {
  let app: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  let session: SessionJson;
  let unsignedReport: Report;
  let signedReport: Report;
  let finalPdf: Buffer;

  async function verify(token: string, clientId: string) {
    return rest<Report>(app, 'GET', '/esign/verify', { token, query: { client_id: clientId } });
  }

  async function sign(token: string) {
    const response = await fetch(new URL('/signer-api/sign', app.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ consent: true }),
    });
    const body = (await response.json()) as Envelope;
    expect(response.status, JSON.stringify(body)).toBe(200);
  }

  beforeAll(async () => {
    app = await startTestApp();
    owner = await app.createUser();
    stranger = await app.createUser();
    const file = await uploadPdf(app, owner.token);
    session = await createSession(
      app,
      owner.token,
      sessionBody(file, {
        signers: [
          signerInput({ full_name: 'Asha Rao', reason: 'Party', elements: [signatureAt(0, 72, 640)] }),
          signerInput({ full_name: 'Ravi Kumar', email: 'ravi@example.com', elements: [signatureAt(3, 300, 500)] }),
        ],
      }),
    );
    const before = await verify(owner.token, session.client_id);
    expect(before.status, JSON.stringify(before.body)).toBe(200);
    unsignedReport = before.body.data!;

    for (const signer of session.signers) await sign(signer.token);
    const after = await verify(owner.token, session.client_id);
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    signedReport = after.body.data!;

    const link = await rest<{ url: string }>(app, 'GET', '/esign/download-pdf', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    finalPdf = Buffer.from(await (await fetch(link.body.data!.url)).arrayBuffer());
  });
  afterAll(async () => app.close());

  it('reports no signature before anyone signed, and all_valid false', () => {
    expect(unsignedReport).toMatchObject({
      client_id: session.client_id,
      file_id: session.current_pdf_file_id,
      signatures: [],
      all_valid: false,
    });
  });

  it('reports both signatures of a completed session as valid, each with what was appended after it', async () => {
    const details = await rest<SessionJson>(app, 'GET', '/esign/details', {
      token: owner.token,
      query: { client_id: session.client_id },
    });
    expect(signedReport.file_id).toBe(details.body.data!.current_pdf_file_id);
    expect(signedReport.document_bytes).toBe(finalPdf.length);
    expect(signedReport.all_valid).toBe(true);
    // Both signatures, then the document time-stamp the completion added (PADES_LTV, on by default).
    const [first, second, stamp] = signedReport.signatures;
    expect(signedReport.signatures).toHaveLength(3);
    for (const [index, signature] of [first, second].entries()) {
      expect(signature, signature.problems.join('; ')).toMatchObject({
        field_name: session.signers[index].signer_id,
        signer_name: index === 0 ? 'Asha Rao' : 'Ravi Kumar',
        signer_subject: expect.stringContaining('Esign Sandbox Document Signer'),
        signing_time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000Z$/),
        sub_filter: 'ETSI.CAdES.detached',
        byte_range_valid: true,
        digest_valid: true,
        signature_valid: true,
        signing_certificate_v2_valid: true,
        // In sandbox the sandbox root CA is a trust anchor: the platform's chain and the TSA's end there.
        certificate_chain_valid: true,
        timestamp: {
          time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
          tsa: 'CN=Esign Sandbox Time-Stamping Authority, O=Esign Sandbox (not trusted), C=IN',
          policy: SANDBOX_TSA_POLICY,
          valid: true,
          chain_valid: true,
          problems: [],
        },
        // The completion's /DSS holds good OCSP answers for the chain, and a document time-stamp covers it.
        revocation: { status: 'good', source: 'ocsp' },
        pades_level: 'B-LTA',
        problems: [],
      });
      // The proven time is the TSA's, within seconds of the signer's claim (/M).
      expect(Math.abs(Date.parse(signature.timestamp!.time!) - Date.parse(signature.signing_time!))).toBeLessThan(60_000);
    }
    expect(first.reason).toBe('Party');
    expect(first.covers_whole_document).toBe(false);
    expect(first.revision_bytes).toBeLessThan(finalPdf.length);
    expect(first.revision_bytes).toBe(first.byte_range[2] + first.byte_range[3]);
    expect(finalPdf.subarray(first.revision_bytes - 6, first.revision_bytes).toString('latin1')).toBe('%%EOF\n');
    // After the first signature: the second signer's update (its signature; no page changed), then the long-term ones.
    expect(first.changes_after.slice(-second.changes_after.length)).toEqual(second.changes_after);
    const secondUpdate = first.changes_after.slice(0, -second.changes_after.length);
    expect(secondUpdate).toContain(`signature of field ${session.signers[1].signer_id} added`);
    expect(secondUpdate.some((change) => /^signature field \d+ 0 R signed$/.test(change))).toBe(true);
    expect(secondUpdate.some((change) => change.startsWith('page '))).toBe(false);
    // After the last signature: nothing but the long-term updates, a /DSS and a document time-stamp over the whole file.
    expect(second.covers_whole_document).toBe(false);
    expect(second.revision_bytes).toBeLessThan(finalPdf.length);
    expect(finalPdf.subarray(second.revision_bytes - 6, second.revision_bytes).toString('latin1')).toBe('%%EOF\n');
    expect(second.byte_range[1]).toBeGreaterThan(first.byte_range[2]);
    expect(second.changes_after).toContainEqual(expect.stringMatching(/^validation data \d+ 0 R \(\/DSS\) added$/));
    expect(second.changes_after).toContain(`document timestamp of field ${stamp.field_name} added`);
    for (const change of second.changes_after) {
      expect(change).toMatch(
        /^(document catalog \d+ 0 R changed \(\/DSS\)|validation data \d+ 0 R \((\/DSS|\/Certs|\/OCSPs|\/CRLs|certificate|OCSP response|CRL)\) added|document timestamp of field DocTimeStamp-\w+ added|page \d+ 0 R \(page \d+\): annotations added|form dictionary \d+ 0 R changed \(\/Fields\)|annotation \d+ 0 R \(Widget\) added)$/,
      );
    }
    // Revision by revision: what the first signer signed, then updates that only add what signing may add.
    expect(
      signedReport.revisions.map(({ number, end_bytes, signatures, verdict, content_changes }) => ({
        number,
        end_bytes,
        signatures,
        verdict,
        content_changes,
      })),
    ).toEqual([
      { number: 1, end_bytes: first.revision_bytes, signatures: [first.field_name], verdict: 'original', content_changes: [] },
      {
        number: 2,
        end_bytes: second.revision_bytes,
        signatures: [second.field_name],
        verdict: 'signing_only',
        content_changes: [],
      },
      { number: 3, end_bytes: expect.any(Number), signatures: [], verdict: 'signing_only', content_changes: [] },
      { number: 4, end_bytes: finalPdf.length, signatures: [stamp.field_name], verdict: 'signing_only', content_changes: [] },
    ]);
    expect(signedReport.revisions[1].changes).toEqual(secondUpdate);
    expect(signedReport.revisions[2].changes[0]).toMatch(/^document catalog \d+ 0 R changed \(\/DSS\)$/);
    expect(await longTermTailProblems(finalPdf)).toEqual([]);
    expect(stamp, stamp.problems.join('; ')).toMatchObject({
      field_name: expect.stringMatching(/^DocTimeStamp-/),
      sub_filter: 'ETSI.RFC3161',
      byte_range_valid: true,
      digest_valid: true,
      signature_valid: true,
      certificate_chain_valid: true,
      timestamp: { tsa: 'CN=Esign Sandbox Time-Stamping Authority, O=Esign Sandbox (not trusted), C=IN', valid: true },
      revocation: null,
      pades_level: null,
      covers_whole_document: true,
      revision_bytes: finalPdf.length,
      changes_after: [],
      problems: [],
    });
    expect(stamp.byte_range[1]).toBeGreaterThan(second.revision_bytes);

    // The same check on the downloaded file, directly, with the sandbox's trust anchor (the root of the platform's chain).
    const { chainPems } = await platformSigningIdentity(app.services, app.services.orm.em.fork());
    expect(await verifyPdfSignatures(finalPdf, { trustedRootsPem: chainPems.slice(-1) })).toEqual({
      signatures: signedReport.signatures,
      revisions: signedReport.revisions,
      all_valid: true,
      document_bytes: finalPdf.length,
    });
  });

  it('answers the same over GraphQL', async () => {
    const response = await gql(app, owner.token, EsignVerificationDocument, { client_id: session.client_id });
    expect(response.errors).toBeUndefined();
    expect(response.data!.esignVerification).toEqual(signedReport);
  });

  it('is the owner’s only: another user and an unknown id get 404 with the details text', async () => {
    for (const [token, clientId] of [
      [stranger.token, session.client_id],
      [owner.token, 'esign_doesnotexist'],
    ]) {
      const response = await verify(token, clientId);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ success: false, status_code: 404, message: SESSION_NOT_FOUND, data: null });
    }
    const graphql = await gql(app, stranger.token, EsignVerificationDocument, { client_id: session.client_id });
    expect(graphql.errors?.[0]).toMatchObject({ message: SESSION_NOT_FOUND, extensions: { code: 'not_found' } });
    expect((await rest(app, 'GET', '/esign/verify', { token: owner.token })).status).toBe(400);
    expect((await verify('not-a-token', session.client_id)).status).toBe(401);
  });

  it('finds a changed byte in the first revision: both signatures (and the document time-stamp) cover it, no digest holds', async () => {
    const [first] = signedReport.signatures;
    // A byte of the first stream's data, well inside the first signed range and far from any /Contents.
    const at = finalPdf.indexOf('stream\n', 0, 'latin1') + 'stream\n'.length + 4;
    expect(at).toBeLessThan(first.byte_range[1]);
    const report = await verifyPdfSignatures(flipByte(finalPdf, at));
    expect(report.signatures).toHaveLength(3);
    const stamp = report.signatures[2];
    expect(stamp).toMatchObject({ sub_filter: 'ETSI.RFC3161', digest_valid: false, signature_valid: true });
    expect(covers(stamp.byte_range, at)).toBe(true);
    expect(stamp.problems).toContain('the document time-stamp does not stamp the bytes its ByteRange covers');
    for (const signature of report.signatures.slice(0, 2)) {
      expect(covers(signature.byte_range, at)).toBe(true);
      expect(signature.digest_valid).toBe(false);
      expect(signature.signature_valid).toBe(true); // the signed attributes are intact; they just name another digest
      expect(signature.byte_range_valid).toBe(true);
      expect(signature.problems.join('; ')).toContain('messageDigest does not match');
    }
    expect(report.all_valid).toBe(false);
  });

  it('finds a changed byte in the second revision: only the second signature breaks', async () => {
    const [first, second] = signedReport.signatures;
    const at = finalPdf.indexOf('/BaseFont /Helvetica', first.revision_bytes, 'latin1') + '/BaseFont /'.length;
    expect(at).toBeGreaterThan(first.revision_bytes);
    expect(covers(second.byte_range, at)).toBe(true);
    const report = await verifyPdfSignatures(flipByte(finalPdf, at));
    // The document time-stamp covers the second revision too.
    expect(report.signatures.map((signature) => signature.digest_valid)).toEqual([true, false, false]);
    expect(report.all_valid).toBe(false);
  });

  /** The revisions after the document time-stamp (the last one the service wrote), and the verdict of the whole. */
  async function judged(tampered: Buffer) {
    if (hasQpdf) qpdfCheck(tampered);
    const report = await verifyPdfSignatures(tampered);
    // Nothing signed was touched: every signature still verifies; only the appended revision is judged.
    expect(report.signatures.every((s) => s.digest_valid && s.signature_valid && s.byte_range_valid)).toBe(true);
    expect(report.revisions.slice(0, 4)).toEqual(signedReport.revisions);
    return { report, appended: report.revisions.slice(4) };
  }

  async function finalDocument() {
    const doc = await PDFDocument.load(finalPdf);
    const page = doc.getPages()[0];
    return {
      doc,
      page,
      next: doc.context.largestObjectNumber + 1,
      root: doc.context.trailerInfo.Root!.toString(),
    };
  }

  it('judges a content change appended after the last signature: the page changed, all_valid false', async () => {
    const { page, next, root } = await finalDocument();
    page.node.set(PDFName.of('Rotate'), PDFNumber.of(90));
    const tampered = appendUpdate(
      finalPdf,
      [
        { number: page.ref.objectNumber, body: page.node.toString() },
        { number: next, body: '<< /Note (appended after signing) >>' },
      ],
      { size: next + 1, root },
    );
    expect((await PDFDocument.load(tampered)).getPageCount()).toBe(4);
    const { report, appended } = await judged(tampered);
    expect(report.all_valid).toBe(false);
    const change = `page ${page.ref.objectNumber} 0 R (page 1) changed (/Rotate)`;
    expect(appended).toEqual([
      {
        number: 5,
        end_bytes: tampered.length,
        signatures: [],
        verdict: 'content_changed',
        changes: [change, `other object ${next} 0 R added`],
        content_changes: [change],
      },
    ]);
    // Every signature lists it among the changes after it, the document time-stamp first of all.
    const [first, second, stamp] = report.signatures;
    expect(stamp.covers_whole_document).toBe(false);
    expect(stamp.revision_bytes).toBe(finalPdf.length);
    expect(stamp.changes_after).toEqual([change, `other object ${next} 0 R added`]);
    expect(second.changes_after).toEqual([...signedReport.signatures[1].changes_after, ...stamp.changes_after]);
    expect(first.changes_after).toEqual([...signedReport.signatures[0].changes_after, ...stamp.changes_after]);
  });

  it('allows a comment annotation added after signing (as "changes allowed"), and ignores an object written again unchanged', async () => {
    const { doc, page, next, root } = await finalDocument();
    const annots = doc.context.obj([...(page.node.Annots()?.asArray() ?? []), PDFRef.of(next)]);
    page.node.set(PDFName.of('Annots'), annots);
    const contents = page.node.get(PDFName.of('Contents'));
    const catalog = doc.context.lookup(doc.context.trailerInfo.Root!) as PDFDict;
    const tampered = appendUpdate(
      finalPdf,
      [
        { number: Number(root.split(' ')[0]), body: catalog.toString() },
        { number: page.ref.objectNumber, body: page.node.toString() },
        { number: next, body: `<< /Type /Annot /Subtype /Text /Rect [10 10 30 30] /Contents (Reviewed) /P ${page.ref} >>` },
      ],
      { size: next + 1, root },
    );
    const { report, appended } = await judged(tampered);
    expect(appended).toEqual([
      {
        number: 5,
        end_bytes: tampered.length,
        signatures: [],
        verdict: 'signing_only',
        changes: [`page ${page.ref.objectNumber} 0 R (page 1): annotations added`, `annotation ${next} 0 R (Text) added`],
        content_changes: [],
      },
    ]);
    expect(contents).toBeInstanceOf(PDFRef);
    expect(report.all_valid).toBe(true);
  });

  it('catches a cross-reference section that points a page back at its version before signing (shadow attack)', async () => {
    const { page, next, root } = await finalDocument();
    // The page was written twice: first as uploaded, then when the document time-stamp's widget was added.
    const [older, current] = objectOffsets(finalPdf, page.ref.objectNumber);
    expect(current).toBeGreaterThan(older);
    const tampered = appendUpdate(finalPdf, [], { size: next, root }, () => [{ number: page.ref.objectNumber, offset: older }]);
    const { report, appended } = await judged(tampered);
    expect(appended.map((revision) => [revision.verdict, revision.content_changes])).toEqual([
      [
        'content_changed',
        [`the cross-reference entry of object ${page.ref.objectNumber} 0 R points to an earlier version (byte ${older})`],
      ],
    ]);
    expect(report.all_valid).toBe(false);
  });

  it('catches an update that frees an object in use, or writes an object its section does not list', async () => {
    const { page, next, root } = await finalDocument();
    const contents = page.node.get(PDFName.of('Contents')) as PDFRef;
    const freed = appendUpdate(finalPdf, [], { size: next, root }, () => [{ number: contents.objectNumber, free: true }]);
    const first = await judged(freed);
    expect(first.appended.map((revision) => revision.content_changes)).toEqual([[`object ${contents.objectNumber} deleted`]]);
    expect(first.report.all_valid).toBe(false);

    // A new content stream for the page, written but left out of the section (a reader scanning objects shows it).
    const hidden = appendUpdate(
      finalPdf,
      [
        { number: contents.objectNumber, body: '<< /Length 20 >>\nstream\n0 0 m 600 800 l S\nendstream' },
        { number: next, body: '<< /Note (listed) >>' },
      ],
      { size: next + 1, root },
      (written) => [{ number: next, offset: written.get(next)! }],
    );
    const second = await judged(hidden);
    expect(second.appended[0].verdict).toBe('content_changed');
    expect(second.appended[0].content_changes).toEqual([
      `object ${contents.objectNumber} 0 R (stream) changed (/Length, /Filter, its data)`,
      `object ${contents.objectNumber} 0 R is written but not listed in the update's cross-reference section`,
    ]);
  });

  it('catches a signature field whose signature is replaced', async () => {
    const { doc, next, root } = await finalDocument();
    const field = doc
      .getForm()
      .getFields()
      .find((candidate) => candidate.getName() === signedReport.signatures[0].field_name)!;
    field.acroField.dict.set(PDFName.of('V'), PDFRef.of(next));
    const tampered = appendUpdate(
      finalPdf,
      [
        { number: field.acroField.ref.objectNumber, body: field.acroField.dict.toString() },
        {
          number: next,
          body: '<< /Type /Sig /Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached /Contents <00> /ByteRange [0 0 0 0] >>',
        },
      ],
      { size: next + 1, root },
    );
    if (hasQpdf) qpdfCheck(tampered);
    const report = await verifyPdfSignatures(tampered);
    const last = report.revisions.at(-1)!;
    expect(last.verdict).toBe('content_changed');
    expect(last.content_changes).toEqual([`signature field ${field.acroField.ref}: its signature was replaced`]);
    expect(report.all_valid).toBe(false);
  });

  it('reports bytes after the last %%EOF that are no update at all', async () => {
    const junk = await verifyPdfSignatures(Buffer.concat([finalPdf, Buffer.from('garbage', 'latin1')]));
    expect(junk.all_valid).toBe(false);
    const tail = '7 bytes appended after the last %%EOF (not a complete incremental update)';
    expect(junk.signatures[2].changes_after).toEqual([tail]);
    expect(junk.revisions.at(-1)).toMatchObject({ verdict: 'content_changed', content_changes: [tail] });
    // White space after the last %%EOF is no update.
    const spaced = await verifyPdfSignatures(Buffer.concat([finalPdf, Buffer.from('\n\n  \n', 'latin1')]));
    expect(spaced.revisions).toEqual(signedReport.revisions);
    expect(spaced.all_valid).toBe(true);
  });

  it('checks the certificate chain when given trust anchors', async () => {
    const identity = await platformSigningIdentity(app.services, app.services.orm.em.fork());
    const trusted = await verifyPdfSignatures(finalPdf, { trustedRootsPem: identity.chainPems.slice(-1) });
    // Both signers' chains, and the document time-stamp's TSA (the sandbox root issues both).
    expect(trusted.signatures.map((signature) => signature.certificate_chain_valid)).toEqual([true, true, true]);
    expect(trusted.all_valid).toBe(true);

    const foreign = await verifyPdfSignatures(finalPdf, {
      trustedRootsPem: [createRootCa('Someone Else', 'Elsewhere').certificatePem],
    });
    expect(foreign.signatures.map((signature) => signature.certificate_chain_valid)).toEqual([false, false, false]);
    expect(foreign.all_valid).toBe(false);
  });
});
