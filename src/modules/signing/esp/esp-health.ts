import type { EntityManager } from '@mikro-orm/postgresql';
import type { EspConfig } from '../../../config';
import { connectionProblem } from '../../../platform/net/connection-problem';
import type { AppServices } from '../../../platform/services';

/**
 * ESP health, shared across processes (the esp_health table): each time this service hands a signer to an ESP it
 * records whether the ESP answered. An ESP that failed ESP_FAILURES_BEFORE_SKIP times in a row is skipped for
 * ESP_SKIP_SECONDS (docs/signing.md, ESP failover); the first start after that tries it again, and one success
 * clears the count. Only what this service observed counts: a signer's browser cannot steer others away.
 */

export interface EspHealthRow {
  backend: string;
  consecutive_failures: number;
  failures_total: number;
  successes_total: number;
  last_failure_at: Date | null;
  last_success_at: Date | null;
  last_problem: string | null;
  skipped_until: Date | null;
}

/** The rows of these ESPs (an ESP never recorded has none). */
export async function espHealthRows(em: EntityManager, backends: readonly string[]): Promise<Map<string, EspHealthRow>> {
  if (backends.length === 0) return new Map();
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(
    `select backend, consecutive_failures, failures_total, successes_total, last_failure_at, last_success_at,
              last_problem, skipped_until
         from esp_health where backend in (${backends.map(() => '?').join(', ')})`,
    [...backends],
  );
  // The driver answers timestamps as text (MikroORM reads dates itself) and bigints as text.
  const date = (value: unknown) => (value === null || value === undefined ? null : new Date(String(value)));
  return new Map(
    rows.map((row) => [
      String(row.backend),
      {
        backend: String(row.backend),
        consecutive_failures: Number(row.consecutive_failures),
        failures_total: Number(row.failures_total),
        successes_total: Number(row.successes_total),
        last_failure_at: date(row.last_failure_at),
        last_success_at: date(row.last_success_at),
        last_problem: row.last_problem === null ? null : String(row.last_problem),
        skipped_until: date(row.skipped_until),
      },
    ]),
  );
}

/** Of these ESPs, the ones skipped now, with until when. */
export async function skippedEsps(em: EntityManager, backends: readonly string[], now = new Date()): Promise<Map<string, Date>> {
  const skipped = new Map<string, Date>();
  for (const [backend, row] of await espHealthRows(em, backends)) {
    if (row.skipped_until && row.skipped_until > now) skipped.set(backend, row.skipped_until);
  }
  return skipped;
}

/**
 * One outcome, in one statement (concurrent starts in several processes each count): a success clears the failures
 * and the skip; a failure counts, and the one that reaches the threshold starts (or extends) the skip.
 */
export async function recordEspOutcome(
  services: AppServices,
  em: EntityManager,
  backend: string,
  outcome: { ok: true } | { ok: false; problem: string },
): Promise<void> {
  const connection = em.getConnection();
  if (outcome.ok) {
    await connection.execute(
      `insert into esp_health (backend, successes_total, last_success_at) values (?, 1, now())
       on conflict (backend) do update set consecutive_failures = 0, skipped_until = null,
         successes_total = esp_health.successes_total + 1, last_success_at = now()`,
      [backend],
    );
    return;
  }
  const { failuresBeforeSkip, skipSeconds } = services.config.espRouting;
  await connection.execute(
    `insert into esp_health as h (backend, consecutive_failures, failures_total, last_failure_at, last_problem, skipped_until)
     values (?, 1, 1, now(), ?, case when 1 >= ? then now() + make_interval(secs => ?) end)
     on conflict (backend) do update set
       consecutive_failures = h.consecutive_failures + 1,
       failures_total = h.failures_total + 1,
       last_failure_at = now(),
       last_problem = excluded.last_problem,
       skipped_until = case when h.consecutive_failures + 1 >= ? then now() + make_interval(secs => ?) else h.skipped_until end`,
    [backend, outcome.problem.slice(0, 500), failuresBeforeSkip, skipSeconds, failuresBeforeSkip, skipSeconds],
  );
}

/**
 * eSign 2.1: whether the ESP's gateway answers at all, before a signer's browser is sent there (the browser posts
 * the request itself, so a dead ESP would otherwise show the signer a browser error). Any HTTP answer below 500
 * counts (a gateway may refuse a GET); a refused connection, a 5xx or no answer within
 * ESP_<NAME>_PROBE_TIMEOUT_SECONDS is a failure. The built-in sandbox is this process: it needs no check.
 */
export async function probeEsp(esp: EspConfig): Promise<{ ok: true } | { ok: false; problem: string }> {
  if (esp.builtIn) return { ok: true };
  try {
    const answer = await fetch(esp.url, {
      method: 'GET',
      redirect: 'manual',
      signal: AbortSignal.timeout(esp.probeTimeoutSeconds * 1000),
    });
    await answer.body?.cancel().catch(() => undefined);
    if (answer.status >= 500) return { ok: false, problem: `the ESP answered HTTP ${answer.status}` };
    return { ok: true };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    return {
      ok: false,
      problem: timedOut
        ? `the ESP did not answer within ${esp.probeTimeoutSeconds} s`
        : `the ESP could not be reached (${connectionProblem(error)})`,
    };
  }
}

/** Every configured ESP as admins see it: its health, the groups naming it, and whether it is skipped now. */
export async function espHealthReport(services: AppServices, em: EntityManager) {
  const { esps, espRouting } = services.config;
  const rows = await espHealthRows(em, Object.keys(esps));
  const now = new Date();
  return Object.values(esps).map((esp) => {
    const row = rows.get(esp.name);
    const skipped = !!row?.skipped_until && row.skipped_until > now;
    return {
      backend: esp.name,
      version: esp.version,
      built_in: esp.builtIn,
      groups: Object.entries(espRouting.groups)
        .filter(([, members]) => members.includes(esp.name))
        .map(([group]) => group),
      state: skipped ? 'skipped' : !row ? 'unknown' : row.consecutive_failures > 0 ? 'failing' : 'healthy',
      consecutive_failures: row?.consecutive_failures ?? 0,
      failures_total: row?.failures_total ?? 0,
      successes_total: row?.successes_total ?? 0,
      last_failure_at: row?.last_failure_at ?? null,
      last_success_at: row?.last_success_at ?? null,
      last_problem: row?.last_problem ?? null,
      skipped_until: skipped ? row!.skipped_until : null,
    };
  });
}
