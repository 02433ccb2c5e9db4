import pg from 'pg';
import type PgBoss from 'pg-boss';

/**
 * pg-boss's connection pool, owned by the service so that closing it cannot hang. pg-pool's `end()` never answers a
 * `connect()` still waiting for a free connection; a pg-boss worker whose fetch waits there at shutdown never stops,
 * and pg-boss checks every second whether it has: the process would never exit. Closing here first refuses every query
 * still waiting for a connection, then ends the pool once the queries already running have finished.
 */
export class QueuePool implements PgBoss.Db {
  private readonly pool: pg.Pool;
  private closed = false;
  private readonly waiting = new Set<() => void>();

  constructor(connectionString: string, options: { max: number; applicationName: string; onError: (error: Error) => void }) {
    this.pool = new pg.Pool({ connectionString, max: options.max, application_name: options.applicationName });
    // An idle connection the server drops: reported, never thrown (pg-pool emits it on the pool).
    this.pool.on('error', options.onError);
  }

  async executeSql(text: string, values: unknown[] = []): Promise<{ rows: any[] }> {
    const client = await this.connect();
    try {
      return await client.query(text, values);
    } finally {
      client.release();
    }
  }

  /** Refuses what still waits for a connection, and ends the pool once the running queries are done. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const refuse of this.waiting) refuse();
    this.waiting.clear();
    await this.pool.end();
  }

  private connect(): Promise<pg.PoolClient> {
    if (this.closed) return Promise.reject(new Error('the queue’s database pool is closed'));
    // Made here, so that its stack names who asked.
    const refusal = new Error('the queue’s database pool closed while this query waited for a connection');
    return new Promise((resolve, reject) => {
      let refusedAlready = false;
      const refuse = () => {
        refusedAlready = true;
        reject(refusal);
      };
      this.waiting.add(refuse);
      this.pool.connect().then(
        (client) => {
          this.waiting.delete(refuse);
          // A connection that came after the refusal goes straight back (it cannot, once the pool ends: kept safe).
          if (refusedAlready) client.release();
          else resolve(client);
        },
        (error: Error) => {
          this.waiting.delete(refuse);
          reject(error);
        },
      );
    });
  }
}
