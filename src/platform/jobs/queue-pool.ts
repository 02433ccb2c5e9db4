import pg from 'pg';
import type PgBoss from 'pg-boss';

/**
 * pg-boss's connection pool, owned by the service so that closing it cannot hang. pg-pool's `end()` never answers a
 * `connect()` still waiting for a free connection: a pg-boss worker whose fetch waited there at shutdown never
 * stopped, and pg-boss checks every second whether it has, so the process never exited. Closing here lets every
 * query already asked for finish first (the pool still serves them), then ends the pool.
 *
 * A query asked after that is never answered: pg-boss sends a job's completion without awaiting it (a job whose
 * handler outlived the stop), so a refusal would be an unhandled rejection; an answer that never comes holds no
 * handle and lets the process exit, and the job, still active in the table, expires and is retried as any job of a
 * stopped worker.
 */
export class QueuePool implements PgBoss.Db {
  private readonly pool: pg.Pool;
  private running = 0;
  private idle: (() => void) | null = null;
  private ended = false;
  private closing: Promise<void> | null = null;

  constructor(connectionString: string, options: { max: number; applicationName: string; onError: (error: Error) => void }) {
    this.pool = new pg.Pool({ connectionString, max: options.max, application_name: options.applicationName });
    // An idle connection the server drops: reported, never thrown (pg-pool emits it on the pool).
    this.pool.on('error', options.onError);
  }

  async executeSql(text: string, values: unknown[] = []): Promise<{ rows: any[] }> {
    if (this.ended) return new Promise(() => undefined);
    this.running++;
    try {
      return await this.pool.query(text, values);
    } finally {
      this.running--;
      if (this.running === 0) this.idle?.();
    }
  }

  /** Ends the pool once every query asked so far has been answered. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      while (this.running > 0) await new Promise<void>((resolve) => (this.idle = resolve));
      this.idle = null;
      this.ended = true;
      await this.pool.end();
    })();
    return this.closing;
  }
}
