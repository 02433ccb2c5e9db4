import { startBenchApp, type BenchApp, type BenchDatabase } from './harness';
import type { BenchRow } from './measure';
import { sized } from './mode';
import { createSession, makePdf, mockStamps, restCall, restData, sessionRequest, uploadPdf } from './session-setup';

const RACERS = sized(50, 10);
const STOCK = sized(60, 12);
const STAMP_RUPEES = 100;
const AMOUNT = '200';
const PER_SESSION = 2;
const ROUNDS = sized(3, 2);

interface Race {
  ms: number;
  succeeded: string[];
  /** Answers other than 200, by status and message. */
  refused: Map<string, number>;
}

/** `RACERS` initializations sent at once; the wall time runs from the first send to the last answer. */
async function race(app: BenchApp, token: string, body: Record<string, unknown>): Promise<Race> {
  const start = performance.now();
  const answers = await Promise.all(
    Array.from({ length: RACERS }, () => restCall<{ client_id: string }>(app, 'POST', '/esign/initialize-esign', token, body)),
  );
  const ms = performance.now() - start;
  const refused = new Map<string, number>();
  const succeeded: string[] = [];
  for (const answer of answers) {
    if (answer.status === 200 && answer.body.data) succeeded.push(answer.body.data.client_id);
    else {
      const key = `${answer.status} ${answer.body.message}`;
      refused.set(key, (refused.get(key) ?? 0) + 1);
    }
  }
  return { ms, succeeded, refused };
}

const describeRefused = (refused: Map<string, number>) =>
  [...refused].map(([answer, count]) => `${count} x ${answer}`).join(', ') || 'none';

/** What the database holds after the race: problems found, empty when no stamp is held twice or lost. */
async function stampProblems(app: BenchApp, stockIds: string[], succeeded: string[]): Promise<string[]> {
  const connection = app.services.orm.em.fork().getConnection();
  const problems: string[] = [];
  const instances = await connection.execute<{ id: string; status: string; session_id: string | null }[]>(
    `select id, status, session_id from stamp_instances where id in (${stockIds.map(() => '?').join(', ')})`,
    stockIds,
  );
  if (instances.length !== STOCK) problems.push(`${instances.length} instances instead of ${STOCK}`);
  const reserved = instances.filter((instance) => instance.status === 'reserved');
  const orphans = reserved.filter((instance) => !instance.session_id).length;
  if (orphans > 0) problems.push(`${orphans} reserved instances without a session`);
  const strays = instances.filter((instance) => instance.status !== 'reserved' && instance.session_id).length;
  if (strays > 0) problems.push(`${strays} instances with a session but not reserved`);
  if (reserved.length !== PER_SESSION * succeeded.length) {
    problems.push(`${reserved.length} reserved instances for ${succeeded.length} sessions (expected ${PER_SESSION} each)`);
  }
  const others = instances.filter((instance) => instance.status !== 'reserved' && instance.status !== 'available').length;
  if (others > 0) problems.push(`${others} instances neither reserved nor available`);
  // A stamp taken by two sessions would show as one session holding it and the other holding too few.
  const bySession = await connection.execute<{ session_id: string; n: number }[]>(
    `select session_id, count(*)::int as n from stamp_instances
      where id in (${stockIds.map(() => '?').join(', ')}) and session_id is not null group by session_id`,
    stockIds,
  );
  const held = new Map(bySession.map((row) => [row.session_id, row.n]));
  for (const id of succeeded) {
    if (held.get(id) !== PER_SESSION) problems.push(`session ${id} holds ${held.get(id) ?? 0} stamps`);
  }
  const unknown = [...held.keys()].filter((id) => !succeeded.includes(id));
  if (unknown.length > 0) problems.push(`stamps held by ${unknown.length} sessions that were refused: ${unknown.join(', ')}`);
  const over = Math.floor(STOCK / PER_SESSION);
  if (succeeded.length > over) problems.push(`${succeeded.length} sessions succeeded, more than the ${over} the stock allows`);
  return problems;
}

/** Cancels the race's sessions, which gives their stamps back: the next round races for the same 60. */
async function releaseAll(app: BenchApp, token: string, sessionIds: string[], stockIds: string[]): Promise<void> {
  for (let first = 0; first < sessionIds.length; first += 10) {
    await Promise.all(
      sessionIds
        .slice(first, first + 10)
        .map((id) => restData(app, 'POST', '/esign/cancel', token, { client_id: id, reason: 'bench' })),
    );
  }
  const [row] = await app.services.orm.em
    .fork()
    .getConnection()
    .execute<{ n: number }[]>(
      `select count(*)::int as n from stamp_instances where status = 'available' and session_id is null and id in (${stockIds.map(() => '?').join(', ')})`,
      stockIds,
    );
  if (row.n !== STOCK) throw new Error(`after cancelling the race's sessions, ${row.n} of ${STOCK} stamps are available`);
}

/**
 * Benchmark 7, contention: 50 amount-flow initializations (200 rupees of MH-5 stamps) sent at once while the
 * inventory holds 60 stamps of 100 rupees, so that at most 30 can succeed and the others must be refused with
 * stamp_combination_not_found. Figure: successful initializations per second of wall time, best of 3 rounds (the
 * winners are cancelled between rounds, which gives the stamps back); baseline: the same 50 initializations
 * without a stamp, best of 3 rounds run alternately with them. Row ok when, after every round, the database shows
 * no stamp held twice: every reserved stamp has its session, each successful session holds exactly 2, refused
 * ones none, reserved = 2 x successes.
 */
export async function contentionBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const app = await startBenchApp(database);
  try {
    const user = await app.createUser();
    const pdf = await uploadPdf(app, user.token, await makePdf(2));
    // The stock is mock stamps: the sessions ask for them (a session takes real stamps only unless it says so).
    const amountFlow = { amount: AMOUNT, state_code: 'MH', article_id: 'MH-5', mock: true };
    // Warm-up on another article, so that the race's inventory is untouched.
    const warmupStock = await mockStamps(app, user.token, STAMP_RUPEES, 4, 'MH-4');
    const stock = await mockStamps(app, user.token, STAMP_RUPEES, STOCK, 'MH-5');
    for (let i = 0; i < 3; i++) await createSession(app, user.token, sessionRequest(pdf, 1));
    for (let i = 0; i < warmupStock.length / PER_SESSION; i++) {
      await createSession(app, user.token, sessionRequest(pdf, 1, undefined, { ...amountFlow, article_id: 'MH-4' }));
    }

    const plainRounds: Race[] = [];
    const contendedRounds: Race[] = [];
    const problems: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const plain = await race(app, user.token, sessionRequest(pdf, 1));
      if (plain.succeeded.length !== RACERS) {
        throw new Error(`initializations without a stamp were refused: ${describeRefused(plain.refused)}`);
      }
      plainRounds.push(plain);
      const contended = await race(app, user.token, sessionRequest(pdf, 1, undefined, amountFlow));
      const unexpected = [...contended.refused.keys()].filter((answer) => !answer.startsWith('422 '));
      if (unexpected.length > 0) throw new Error(`racing initializations answered ${describeRefused(contended.refused)}`);
      if (contended.succeeded.length === 0) problems.push(`round ${round + 1}: no initialization succeeded`);
      problems.push(...(await stampProblems(app, stock, contended.succeeded)).map((problem) => `round ${round + 1}: ${problem}`));
      contendedRounds.push(contended);
      if (round < ROUNDS - 1) await releaseAll(app, user.token, contended.succeeded, stock);
    }

    const rate = (result: Race) => (result.succeeded.length * 1000) / result.ms;
    const best = (rounds: Race[]) => rounds.reduce((a, b) => (rate(b) > rate(a) ? b : a));
    const contended = best(contendedRounds);
    const plain = best(plainRounds);
    const successes = contendedRounds.map((round) => round.succeeded.length).join(', ');
    return [
      {
        name: `contention: ${RACERS} amount-flow initializations racing for ${STOCK} stamps`,
        figure:
          `${rate(contended).toFixed(1)} sessions/s (${contended.succeeded.length} of ${RACERS} in ${contended.ms.toFixed(0)} ms; ` +
          `successes per round ${successes}; refused: ${describeRefused(contended.refused)})` +
          (problems.length > 0 ? `; STAMP CHECK FAILED: ${problems.join('; ')}` : ''),
        baseline: `${rate(plain).toFixed(1)} sessions/s without a stamp (${RACERS} in ${plain.ms.toFixed(0)} ms)`,
        ratio: rate(contended) / rate(plain),
        floor: 'no stamp held twice',
        ok: problems.length === 0,
      },
    ];
  } finally {
    await app.close();
  }
}
