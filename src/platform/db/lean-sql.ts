import type { Orm } from './orm';

interface PgClient {
  query(text: string, values: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * Runs one statement on a connection of the ORM's own pool, past the ORM and knex: for the few reads so hot
 * that query building and hydration cost more than the database (the token look-up of every request, the
 * session details read). It reads committed data on a connection of its own, never inside a transaction.
 * Placeholders are PostgreSQL's `$1, $2...`; timestamps arrive as text (MikroORM's type parsers), as the ORM
 * sees them, so callers turn them into dates with `new Date(text)` as the ORM does.
 */
export async function leanRows<T>(orm: Orm, text: string, values: unknown[]): Promise<T[]> {
  const client = orm.em.getConnection().getKnex().client;
  const connection = (await client.acquireConnection()) as PgClient;
  try {
    // Whoever listens to knex's 'query' event (statement counts, query logs) sees this statement too.
    client.emit('query', { sql: text, bindings: values, method: 'raw' });
    return (await connection.query(text, values)).rows as T[];
  } finally {
    await client.releaseConnection(connection);
  }
}

/** A timestamp column as the ORM would hydrate it. */
export function dateOf(text: string | Date): Date;
export function dateOf(text: string | Date | null): Date | undefined;
export function dateOf(text: string | Date | null): Date | undefined {
  if (text == null) return undefined;
  return text instanceof Date ? text : new Date(text);
}
