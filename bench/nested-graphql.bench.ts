import { startBenchApp, type BenchApp, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { sized } from './mode';
import {
  createSession,
  graphqlCall,
  makePdf,
  makePng,
  mockStamps,
  sessionRequest,
  uploadAsset,
  uploadPdf,
} from './session-setup';

const SESSIONS = sized(50, 6);
const SIGNERS = 3;
const STAMPS_PER_SESSION = 2;
const WARMUP = sized(5, 1);
const RUNS = sized(30, 3);

const PAGE_QUERY = `query Page($size: Int!) {
  esignSessions(page: 1, size: $size) {
    items {
      client_id
      signers { signer_id elements { field_id asset { client_id } } }
      stamps { stamp_id order { client_id } pdf_file { client_id } }
      source_file { client_id }
    }
  }
}`;

interface Page {
  esignSessions: {
    items: {
      client_id: string;
      signers: { signer_id: string; elements: { field_id: string; asset: { client_id: string } | null }[] }[];
      stamps: { stamp_id: string; order: { client_id: string }; pdf_file: { client_id: string } | null }[];
      source_file: { client_id: string };
    }[];
  };
}

/** One page read, checked to hold everything it should (so that a count of statements means something). */
async function readPage(app: BenchApp, token: string, size: number, assetId: string): Promise<void> {
  const page = await graphqlCall<Page>(app, token, PAGE_QUERY, { size });
  const items = page.esignSessions.items;
  const complete =
    items.length === size &&
    items.every(
      (item) =>
        item.source_file.client_id &&
        item.stamps.length === STAMPS_PER_SESSION &&
        item.stamps.every((stamp) => stamp.order.client_id && stamp.pdf_file?.client_id) &&
        item.signers.length === SIGNERS &&
        item.signers.every((signer) => signer.elements.length === 2 && signer.elements[1].asset?.client_id === assetId),
    );
  if (!complete) throw new Error(`a page of ${size} is not what was set up: ${JSON.stringify(page).slice(0, 2000)}`);
}

/** SQL statements the app ran during one request (fewest of 3, so that a background sweep cannot add to it). */
async function statementsPerRequest(app: BenchApp, request: () => Promise<void>): Promise<number> {
  const knex = app.services.orm.em.getConnection().getKnex();
  const counts: number[] = [];
  for (let i = 0; i < 3; i++) {
    let statements = 0;
    const listener = () => statements++;
    knex.on('query', listener);
    try {
      await request();
    } finally {
      knex.removeListener('query', listener);
    }
    counts.push(statements);
  }
  return Math.min(...counts);
}

async function medianMs(request: () => Promise<void>): Promise<number> {
  for (let i = 0; i < WARMUP; i++) await request();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await request();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return (times[(RUNS - 1) >> 1] + times[RUNS >> 1]) / 2;
}

/**
 * Benchmark 2, nested GraphQL: a page of 50 sessions, each with 3 signers (a signature element and an image
 * element showing an uploaded asset) and 2 reserved stamps (one from each of two mock orders), read with
 * signers -> elements -> asset, stamps -> order and certificate file, and the source file. The SQL statements
 * of that request (authentication included) must be as many as for a page of 1 session; the latency (median of
 * 30 sequential requests after 5 warm-ups) is reported against the page of 1, without a floor.
 */
export async function nestedGraphqlBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const app = await startBenchApp(database);
  try {
    const user = await app.createUser();
    const pdf = await uploadPdf(app, user.token, await makePdf(2));
    const asset = await uploadAsset(app, user.token, makePng(40, 20));
    const orders = await Promise.all(
      Array.from({ length: STAMPS_PER_SESSION }, () => mockStamps(app, user.token, 100, SESSIONS, 'MH-5')),
    );
    // A few at a time: each one copies the stamp certificates in front of the document.
    for (let first = 0; first < SESSIONS; first += 5) {
      await Promise.all(
        Array.from({ length: Math.min(5, SESSIONS - first) }, (_, k) =>
          createSession(
            app,
            user.token,
            sessionRequest(pdf, SIGNERS, asset, { stamp_instance_ids: orders.map((ids) => ids[first + k]), mock: true }),
          ),
        ),
      );
    }

    const page = (size: number) => () => readPage(app, user.token, size, asset);
    await page(SESSIONS)();
    const one = await statementsPerRequest(app, page(1));
    const fifty = await statementsPerRequest(app, page(SESSIONS));
    const oneMs = await medianMs(page(1));
    const fiftyMs = await medianMs(page(SESSIONS));

    const shape = `${SESSIONS} sessions x ${SIGNERS} signers x 2 elements, ${STAMPS_PER_SESSION} stamps each`;
    return [
      {
        name: `nested GraphQL: SQL statements, page of ${shape}`,
        figure: `${fifty} statements`,
        baseline: `${one} statements (page of 1)`,
        ratio: fifty / one,
        floor: 'equal to the page of 1',
        ok: fifty === one,
      },
      {
        name: `nested GraphQL: latency, page of ${SESSIONS} sessions`,
        figure: `${fiftyMs.toFixed(1)} ms (median of ${RUNS})`,
        baseline: `${oneMs.toFixed(1)} ms (page of 1)`,
        ratio: fiftyMs / oneMs,
      },
    ];
  } finally {
    await app.close();
  }
}
