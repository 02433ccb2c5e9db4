/** How many requests one kind of caller may make per window. */
export interface RatePolicy {
  /** Names the policy in keys and in the RateLimit headers: `token`, `signer`, `address`. */
  name: string;
  limit: number;
  windowSeconds: number;
}

export interface RateDecision {
  allowed: boolean;
  policy: RatePolicy;
  remaining: number;
  /** Seconds until the window ends and the quota is whole again. */
  resetSeconds: number;
}

type RunSql = (text: string, values: unknown[]) => Promise<{ key: string; window_ms: number; hits: number }[]>;

interface Counter {
  policy: RatePolicy;
  caller: string;
  windowStart: number;
  /** The shared count PostgreSQL gave at the last flush (every process's requests). */
  shared: number;
  /** This process's requests since then, not yet added to the shared count. */
  pending: number;
}

/**
 * Fixed-window counters shared by every process of the service through PostgreSQL. Libraries with a
 * PostgreSQL store (rate-limiter-flexible, express-rate-limit stores) spend one statement per request; on the
 * hot reads that doubles the database round trips. Here a decision is taken in memory, from the shared count
 * of the last flush plus this process's own requests since, and every `flushMs` one statement adds each
 * process's new requests and reads the sums back. What that means exactly: a caller can exceed its limit by
 * at most the requests it sends to *other* processes within one flush interval (200 ms by default); with one
 * process the limit is exact.
 */
export class RateLimiter {
  private readonly counters = new Map<string, Counter>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private lastSweep = 0;

  constructor(
    private readonly runSql: RunSql,
    private readonly onError: (error: unknown) => void,
    private readonly flushMs = 200,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  /** Counts one request of `caller` under `policy`, unless its quota is spent (a refused request is not counted). */
  consume(policy: RatePolicy, caller: string): RateDecision {
    const now = this.now();
    const windowMs = policy.windowSeconds * 1000;
    const windowStart = Math.floor(now / windowMs) * windowMs;
    const key = `${policy.name}:${caller}`;
    let counter = this.counters.get(key);
    if (!counter || counter.windowStart !== windowStart) {
      counter = { policy, caller, windowStart, shared: 0, pending: 0 };
      this.counters.set(key, counter);
    }
    const used = counter.shared + counter.pending;
    const resetSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
    if (used >= policy.limit) return { allowed: false, policy, remaining: 0, resetSeconds };
    counter.pending += 1;
    return { allowed: true, policy, remaining: policy.limit - used - 1, resetSeconds };
  }

  /** Adds this process's new requests to the shared counts and reads the sums back (one statement). */
  flush(): Promise<void> {
    this.flushing ??= this.flushOnce().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async flushOnce(): Promise<void> {
    const now = this.now();
    const sent: [string, Counter, number][] = [];
    for (const [key, counter] of this.counters) {
      if (counter.windowStart + counter.policy.windowSeconds * 1000 <= now) {
        // A past window: its count no longer decides anything.
        this.counters.delete(key);
      } else if (counter.pending > 0) {
        sent.push([key, counter, counter.pending]);
      }
    }
    try {
      if (sent.length > 0) {
        const rows = await this.runSql(
          `insert into rate_limit_counters (key, window_start, hits)
             select * from unnest($1::text[], $2::timestamptz[], $3::int[])
           on conflict (key, window_start) do update set hits = rate_limit_counters.hits + excluded.hits
           returning key, (extract(epoch from window_start) * 1000)::float8 as window_ms, hits`,
          [
            sent.map(([key]) => key),
            sent.map(([, counter]) => new Date(counter.windowStart).toISOString()),
            sent.map(([, , hits]) => hits),
          ],
        );
        const shared = new Map(rows.map((row) => [`${row.key}@${row.window_ms}`, row.hits]));
        for (const [key, counter, hits] of sent) {
          counter.pending -= hits;
          counter.shared = shared.get(`${key}@${counter.windowStart}`) ?? counter.shared + hits;
        }
      }
      if (now - this.lastSweep > 60_000) {
        this.lastSweep = now;
        // Windows last minutes at most; an hour-old row is garbage whoever wrote it.
        await this.runSql(`delete from rate_limit_counters where window_start < now() - interval '1 hour'`, []);
      }
    } catch (error) {
      // The counts stay pending and go with the next flush; decisions go on from what this process knows.
      this.onError(error);
    }
  }
}

/** The IETF RateLimit fields (draft-ietf-httpapi-ratelimit-headers-09): the policy, and what is left of it. */
export function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  const { policy } = decision;
  return {
    'RateLimit-Policy': `"${policy.name}";q=${policy.limit};w=${policy.windowSeconds}`,
    RateLimit: `"${policy.name}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}
