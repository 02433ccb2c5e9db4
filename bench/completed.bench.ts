import { createHash, sign } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { platformSigningIdentity } from '../src/modules/signing/platform-identity';
import { verifyPdfSignatures } from '../src/modules/signing/verify/verify-document';
import { percentile, startBenchApp, type BenchApp, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { makePdf, restData, sessionRequest, uploadPdf } from './session-setup';
import { benchSigningPeers } from './signing-peers';

/** Sessions in flight at once (the machine's two cores and the database are busy well before more), and how many. */
const PARALLEL = sized(8, 2);
const DOCUMENTS = sized(48, 4);

interface Peers {
  url: string;
  /** The requests the service made of the TSA and the OCSP responder, their bodies kept for the floor to repeat. */
  requests: { path: string; body: Buffer }[];
}

/** The bench's own TSA and OCSP responder, counting (and keeping) what the service asks of them. */
async function countingPeers() {
  const peers = await benchSigningPeers();
  const seen: Peers['requests'] = [];
  peers.server.prependListener('request', (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => seen.push({ path: req.url ?? '', body: Buffer.concat(chunks) }));
  });
  return { ...peers, seen };
}

interface Steps {
  initialize: number;
  first: number;
  /** The last signature: its update, then completion (the certificate, B-LT's /DSS, B-LTA's document time-stamp). */
  last: number;
}

async function signAs(app: BenchApp, token: string): Promise<void> {
  const response = await fetch(`${app.url}/signer-api/sign`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ consent: true }),
  });
  if (response.status !== 200) throw new Error(`signing answered ${response.status}: ${await response.text()}`);
}

/** One two-signer suresign session from initialize-esign to its completed document; the time of each step. */
async function completeOne(app: BenchApp, token: string, fileId: string): Promise<Steps> {
  const began = performance.now();
  const session = await restData<{ client_id: string; signers: { token: string }[] }>(
    app,
    'POST',
    '/esign/initialize-esign',
    token,
    sessionRequest(fileId, 2),
  );
  const initialized = performance.now();
  await signAs(app, session.signers[0]!.token);
  const first = performance.now();
  await signAs(app, session.signers[1]!.token);
  const done = performance.now();
  return { initialize: initialized - began, first: first - initialized, last: done - first };
}

/** Runs `work` `count` times, `parallel` at a time; answers the wall time in ms and each result. */
async function inParallel<T>(count: number, parallel: number, work: () => Promise<T>): Promise<{ ms: number; results: T[] }> {
  const results: T[] = [];
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) {
        next++;
        results.push(await work());
      }
    }),
  );
  return { ms: performance.now() - began, results };
}

const median = (values: number[]) => percentile(values, 50);

/**
 * Benchmark: documents completed. Two-signer suresign sessions from initialize-esign to a completed PAdES B-LTA
 * document (each signature time-stamped, the certificate of completion signed, the /DSS and the document time-stamp
 * added), PARALLEL at a time, in documents per second. The floor is the same cryptography done directly, with the same
 * parallelism, on the same TSA and OCSP responder: per document, the RSA signatures its PDFs carry (read back from the
 * signed document and certificate), a SHA-256 pass over the final document for each, and the very TSA and OCSP requests
 * the service made for it (counted and kept at the peers, sent again). Where the time goes: each step's median.
 */
export async function completedDocumentBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const peers = await countingPeers();
  const app = await startBenchApp(database, { TSA_URL: `${peers.url}/tsa`, PADES_LTV: 'true' });
  try {
    const user = await app.createUser();
    const fileId = await uploadPdf(app, user.token, await makePdf(2));
    // One first, to warm the service and to learn what one document costs in cryptography.
    peers.seen.length = 0;
    await completeOne(app, user.token, fileId);
    const perDocument = [...peers.seen];
    const measured = await inParallel(DOCUMENTS, PARALLEL, () => completeOne(app, user.token, fileId));

    // What one completed document holds: its signatures (and the certificate's), to count the RSA operations.
    const latest = await restData<{ items: { client_id: string }[] }>(app, 'GET', '/esign/list?page=1&size=1', user.token);
    const clientId = latest.items[0]!.client_id;
    const signed = await downloadOf(app, user.token, `/esign/download-pdf?client_id=${clientId}`);
    const certificate = await downloadOf(app, user.token, `/esign/download-certificate?client_id=${clientId}`);
    const cmsSignatures = [
      ...(await verifyPdfSignatures(signed)).signatures,
      ...(await verifyPdfSignatures(certificate)).signatures,
    ].filter((signature) => signature.sub_filter !== 'ETSI.RFC3161').length;
    const identity = await platformSigningIdentity(app.services, app.services.orm.em.fork());
    const floor = await inParallel(DOCUMENTS, PARALLEL, () =>
      cryptographyOf({
        signatures: cmsSignatures,
        pdf: signed,
        privateKeyPem: identity.privateKeyPem,
        peers: peers.url,
        requests: perDocument,
      }),
    );

    const rate = (ms: number) => (DOCUMENTS / ms) * 1000;
    const steps = measured.results;
    const tsa = perDocument.filter((request) => request.path === '/tsa').length;
    const ocsp = perDocument.length - tsa;
    return [
      {
        name: `documents completed: two-signer suresign to B-LTA, ${PARALLEL} in parallel (${DOCUMENTS} documents)`,
        figure:
          `${rate(measured.ms).toFixed(1)} documents/s; per document, medians: initialize ${median(steps.map((s) => s.initialize)).toFixed(0)} ms, ` +
          `first signature ${median(steps.map((s) => s.first)).toFixed(0)} ms, last signature and completion ${median(steps.map((s) => s.last)).toFixed(0)} ms`,
        baseline:
          `${rate(floor.ms).toFixed(1)} documents/s: the same cryptography directly (${cmsSignatures} RSA signatures, ` +
          `${tsa} time-stamp and ${ocsp} OCSP requests per document, on the same TSA and responder)`,
        ratio: floor.ms / measured.ms,
        floor: 'reported (no floor yet)',
        ok: true,
      },
    ];
  } finally {
    await app.close();
    await peers.close();
  }
}

async function downloadOf(app: BenchApp, token: string, route: string): Promise<Uint8Array> {
  const link = await restData<{ url: string }>(app, 'GET', route, token);
  return new Uint8Array(await (await fetch(link.url)).arrayBuffer());
}

/** One document's cryptography, done directly: the RSA signatures over a hash of the document, the peers' requests. */
async function cryptographyOf(work: {
  signatures: number;
  pdf: Uint8Array;
  privateKeyPem: string;
  peers: string;
  requests: Peers['requests'];
}): Promise<void> {
  for (let i = 0; i < work.signatures; i++) {
    const digest = createHash('sha256').update(work.pdf).digest();
    sign('sha256', digest, work.privateKeyPem);
  }
  for (const request of work.requests) {
    const answer = await fetch(`${work.peers}${request.path}`, {
      method: 'POST',
      headers: { 'content-type': request.path === '/tsa' ? 'application/timestamp-query' : 'application/ocsp-request' },
      body: new Uint8Array(request.body),
    });
    await answer.arrayBuffer();
  }
}
