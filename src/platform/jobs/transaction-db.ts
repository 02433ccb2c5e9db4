import type { EntityManager } from '@mikro-orm/postgresql';
import type PgBoss from 'pg-boss';

/**
 * pg-boss's `db` option over an entity manager's open transaction: a job sent or inserted through it is
 * written by that transaction, so it commits or rolls back with the rows that needed it, and no worker
 * can see it before the commit. pg-boss writes `$n` placeholders; the ORM's raw queries take `?`.
 */
export function transactionDb(em: EntityManager): PgBoss.Db {
  return {
    async executeSql(text: string, values: unknown[] = []) {
      if (!em.isInTransaction()) throw new Error('transactionDb needs an entity manager inside a transaction');
      // A literal `?` would be read as a placeholder by the ORM; pg-boss's statements have none.
      if (text.includes('?')) throw new Error('transactionDb cannot run a statement that contains "?"');
      const bindings: unknown[] = [];
      const sql = text.replace(/\$(\d+)/g, (_match, position: string) => {
        const value = values[Number(position) - 1] ?? null;
        // The query builder would spread an array into a list of placeholders.
        if (Array.isArray(value)) throw new Error('transactionDb cannot bind an array');
        bindings.push(value);
        return '?';
      });
      const rows = await em.getConnection().execute(sql, bindings, 'all', em.getTransactionContext());
      return { rows: rows as unknown[] };
    },
  };
}
