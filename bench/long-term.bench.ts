import { createHash } from 'node:crypto';
import { PDFDocument } from 'pdf-lib';
import { signDetachedCms, type SigningIdentity } from '../src/modules/signing/cms-sign';
import { appendValidationData } from '../src/modules/signing/pdf/dss';
import { prepareForSigning } from '../src/modules/signing/pdf/prepare-for-signing';
import { buildAppendedPagesSignatureUpdate } from '../src/modules/signing/pdf/append-signed-pages';
import {
  buildDocumentTimestampUpdate,
  buildSignatureUpdate,
  fillSignature,
  signIncrementally,
  type PreparedSignature,
  type SignatureAppearance,
} from '../src/modules/signing/pdf/sign-incrementally';
import {
  renderCompletionCertificate,
  type CompletionCertificateFacts,
} from '../src/modules/esign/completion/render-completion-certificate';
import { fetchRevocation } from '../src/modules/signing/revocation/revocation-client';
import { addSignatureTimestamp } from '../src/modules/signing/tsa/signature-timestamp';
import { tsaStamper } from '../src/modules/signing/tsa/tsa-client';
import { verifyPdfSignatures } from '../src/modules/signing/verify/verify-document';
import { benchSigningPeers } from './signing-peers';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { documentOf } from './signing.bench';

/** The signed document's size in MB, the verified one's (of 10 signatures), and the measured runs of each median. */
const DOCUMENT_MB = sized(10, 1);
const VERIFIED_MB = sized(50, 2);
const RUNS = sized(5, 1);
const VERIFY_RUNS = sized(3, 1);

/** A PDF of about `megabytes` MB (as the signing bench makes it) with `fields` signature fields. */
async function preparedDocument(megabytes: number, fields: number): Promise<Uint8Array> {
  return prepareForSigning(
    await documentOf(megabytes),
    Array.from({ length: fields }, (_, i) => ({
      fieldName: `signer-${i}`,
      signatureBoxes: [{ page: 0, x: 40 + (i % 3) * 180, y: 100 + Math.floor(i / 3) * 60, width: 170, height: 50 }],
    })),
  );
}

const certificateAppearance: SignatureAppearance = {
  fieldName: 'CompletionCertificate-bench',
  signerName: 'Bench Platform',
  reason: 'Certificate of completion',
  time: new Date(),
  appearanceLines: ['Certificate of completion', 'Digitally signed by Bench Platform'],
};

/** What a three-signer session's certificate states, with forty audit events. */
function completionFacts(signedBytes: number): CompletionCertificateFacts {
  const at = new Date().toISOString();
  const signers = ['Asha Rao', 'Vikram Singh', 'Meera Iyer'].map((name, position) => ({
    position,
    name,
    email: `${name.split(' ')[0]!.toLowerCase()}@example.com`,
    mobile: '+91 9876543210',
    signType: 'suresign',
    certificateSubject: `CN=${name}, O=Example, C=IN`,
    signedAt: at,
    signature: 'valid, PAdES B-T, chain trusted',
    ip: '203.0.113.7',
    userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0',
    location: '12.97160, 77.59460, accuracy 20 m, from the device',
    checks: ['email verified', 'mobile verified', 'face match score 91, liveness 88'],
    fields: [
      { label: 'Amount in words', shown: 'Two lakh rupees', filled: `by the signer ${at}` },
      { label: 'Signed on', shown: '27/11/2026 14:05 IST', filled: `by the service ${at}` },
    ],
  }));
  return {
    sessionId: 'esign_bench',
    documents: [
      {
        name: 'Lease deed.pdf',
        pageCount: 1,
        original: { sha256: 'a'.repeat(64), bytes: signedBytes },
        signed: { sha256: 'b'.repeat(64), bytes: signedBytes },
      },
    ],
    createdAt: at,
    completedAt: at,
    signingOrder: 'sequential',
    appended: false,
    signers,
    events: Array.from({ length: 40 }, (_, i) => ({
      at,
      event: ['invite_sent', 'viewed', 'otp_sent', 'otp_verified', 'signed'][i % 5]!,
      signer: signers[i % 3]!.name,
      ip: '203.0.113.7',
      details: i % 5 === 4 ? 'field: signer_0123456789abcdef; sign_type: suresign' : null,
    })),
    issuer: 'Bench Platform',
  };
}

async function median(runs: number, measure: () => Promise<number>): Promise<number> {
  await measure();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) times.push(await measure());
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const began = process.hrtime.bigint();
  const value = await work();
  return { ms: Number(process.hrtime.bigint() - began) / 1e6, value };
}

/** A PDF of about `megabytes` MB signed `signatures` times, each signature time-stamped (B-T), as incremental updates. */
export async function timestampedDocument(megabytes: number, signatures: number): Promise<Uint8Array> {
  const { signer, stamper, close } = await benchSigningPeers();
  try {
    return await signedRevisions(await preparedDocument(megabytes, signatures), signatures, signer, stamper);
  } finally {
    await close();
  }
}

async function signedRevisions(
  pdf: Uint8Array,
  signatures: number,
  signer: SigningIdentity,
  stamper: ReturnType<typeof tsaStamper>,
): Promise<Uint8Array> {
  let signed = pdf;
  for (let i = 0; i < signatures; i++) {
    signed = await signIncrementally(signed, {
      fieldName: `signer-${i}`,
      signerName: `Signer ${i}`,
      time: new Date(),
      appearanceLines: [`Signer ${i}`],
      sign: async (ranges) => addSignatureTimestamp(await signDetachedCms(ranges, signer), stamper),
    });
  }
  return signed;
}

/**
 * What trusted time and long-term validation cost (issue 18): a signature with its RFC 3161 time-stamp (B-T) against
 * the same signature without (B-B) on the same 10 MB document, the long-term step of a completion (revocation
 * data, /DSS, document time-stamp), the bytes each adds, and verifying a 50 MB document of 10 signatures.
 */
export async function longTermBenchmarks(): Promise<BenchRow[]> {
  const { root, tsa, signer, stamper, close } = await benchSigningPeers();
  const rows: BenchRow[] = [];
  try {
    const pdf = await preparedDocument(DOCUMENT_MB, 1);
    const sign = (timestamp: boolean) =>
      signIncrementally(pdf, {
        fieldName: 'signer-0',
        signerName: 'Bench Signer',
        time: new Date(),
        appearanceLines: ['Digitally signed by Bench Signer'],
        sign: async (ranges) => {
          const cms = await signDetachedCms(ranges, signer);
          return timestamp ? addSignatureTimestamp(cms, stamper) : cms;
        },
      });
    const plain = await median(RUNS, async () => (await timed(() => sign(false))).ms);
    const stamped = await median(RUNS, async () => (await timed(() => sign(true))).ms);
    const cmsBytes = async (timestamp: boolean) => {
      const cms = await signDetachedCms([Buffer.from('x')], signer);
      return (timestamp ? await addSignatureTimestamp(cms, stamper) : cms).length;
    };
    const [plainBytes, stampedBytes] = [await cmsBytes(false), await cmsBytes(true)];
    rows.push({
      name: `signature + RFC 3161 time-stamp (B-T) on a ${DOCUMENT_MB} MB PDF, TSA over local HTTP`,
      figure: `${stamped.toFixed(1)} ms; the CMS grows by ${stampedBytes - plainBytes} bytes (${plainBytes} -> ${stampedBytes})`,
      baseline: `${plain.toFixed(1)} ms the same signature without (B-B)`,
      ratio: stamped / plain,
    });

    // The completion's long-term step on the signed document: revocation data, the /DSS update, the document time-stamp.
    const signed = await sign(true);
    const longTerm = async () => {
      const evidence = await fetchRevocation(signer.certificatePem, root.certificatePem, {
        timeoutMs: 10_000,
        publicOnly: false,
      });
      const withDss = await appendValidationData(signed, {
        certificates: [signer.certificatePem, root.certificatePem, tsa.certificatePem].map((pem) =>
          Buffer.from(pem.replace(/-----[^-]+-----|\s+/g, ''), 'base64'),
        ),
        ocsps: evidence.data ? [evidence.data] : [],
        crls: [],
      });
      const prepared = await buildDocumentTimestampUpdate(withDss, 'DocTimeStamp-bench');
      const digest = createHash('sha256')
        .update(prepared.updated.subarray(0, prepared.contentsAt))
        .update(prepared.updated.subarray(prepared.contentsEnd))
        .digest();
      return fillSignature(prepared, await stamper(digest));
    };
    const final = await longTerm();
    const ltv = await median(RUNS, async () => (await timed(longTerm)).ms);
    rows.push({
      name: `long-term step on completion (OCSP, /DSS update, document time-stamp), ${DOCUMENT_MB} MB PDF`,
      figure: `${ltv.toFixed(1)} ms; adds ${final.length - signed.length} bytes`,
      baseline: `${stamped.toFixed(1)} ms one B-T signature of the same document`,
      ratio: ltv / stamped,
    });

    // The certificate of completion (issue 21): drawn, the signed document verified for what it states, signed by
    // the platform with a time-stamp; and, with append_certificate, appended to the 10 MB document in one signed update.
    const facts = completionFacts(signed.length);
    const signCertificate = async () => {
      const verification = await verifyPdfSignatures(signed, { trustedRootsPem: [root.certificatePem] });
      const rendered = await renderCompletionCertificate({
        ...facts,
        documents: facts.documents.map((document) => ({
          ...document,
          signed: { ...document.signed, bytes: verification.document_bytes },
        })),
      });
      const withField = await prepareForSigning(rendered.pdf, [
        { fieldName: certificateAppearance.fieldName, signatureBoxes: [rendered.signatureBox] },
      ]);
      const prepared = await buildSignatureUpdate(withField, certificateAppearance);
      return { rendered, pdf: await fillWith(prepared) };
    };
    const fillWith = async (prepared: PreparedSignature) =>
      fillSignature(
        prepared,
        await addSignatureTimestamp(
          await signDetachedCms(
            [prepared.updated.subarray(0, prepared.contentsAt), prepared.updated.subarray(prepared.contentsEnd)],
            signer,
          ),
          stamper,
        ),
      );
    const { rendered } = await signCertificate();
    const certificate = await median(RUNS, async () => (await timed(signCertificate)).ms);
    rows.push({
      name: `certificate of completion (3 signers, 40 audit events): verify the signed ${DOCUMENT_MB} MB PDF, draw, sign (B-T)`,
      figure: `${certificate.toFixed(1)} ms`,
      baseline: `${stamped.toFixed(1)} ms one B-T signature of the same document`,
      ratio: certificate / stamped,
    });
    const append = async () =>
      fillWith(await buildAppendedPagesSignatureUpdate(signed, rendered.pdf, certificateAppearance, rendered.signatureBox));
    const appended = await append();
    const appending = await median(RUNS, async () => (await timed(append)).ms);
    rows.push({
      name: `append_certificate: its pages and the platform signature over them, one update of the ${DOCUMENT_MB} MB PDF`,
      figure: `${appending.toFixed(1)} ms; adds ${appended.length - signed.length} bytes`,
      baseline: `${stamped.toFixed(1)} ms one B-T signature of the same document`,
      ratio: appending / stamped,
    });

    // Verification: linear in the file, ten revisions of a 50 MB document.
    const big = await signedRevisions(await preparedDocument(VERIFIED_MB, 10), 10, signer, stamper);
    const verify = await median(
      VERIFY_RUNS,
      async () => (await timed(() => verifyPdfSignatures(big, { trustedRootsPem: [root.certificatePem] }))).ms,
    );
    const load = await median(VERIFY_RUNS, async () => (await timed(() => PDFDocument.load(big, { updateMetadata: false }))).ms);
    const report = await verifyPdfSignatures(big, { trustedRootsPem: [root.certificatePem] });
    rows.push({
      name: `verify a ${(big.length / 1024 / 1024).toFixed(1)} MB PDF of 10 time-stamped signatures (10 revisions)`,
      figure: `${verify.toFixed(0)} ms, all_valid ${report.all_valid}, ${report.signatures.filter((s) => s.pades_level === 'B-T').length} at B-T`,
      baseline: `${load.toFixed(0)} ms pdf-lib load of the same file`,
      ratio: verify / load,
      floor: '< 2000 ms',
      ok: verify < 2000 && report.all_valid,
    });
  } finally {
    await close();
  }
  return rows;
}
