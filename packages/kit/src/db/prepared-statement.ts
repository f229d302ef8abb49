import type { EntityManager } from '@mikro-orm/postgresql';
import { isInTransaction } from './orm.js';

/** What a prepared statement binds: one value per `?`. */
export type StatementValue = string | number | boolean | null | Date;

const registered = new Map<string, string>();

/**
 * A hot statement (a read on every request, a claim or completion on every delivery) run as a
 * named prepared statement. MikroORM sends every query with its values written into the SQL, so
 * PostgreSQL parses and plans it on each call, and for a small statement planning costs more than
 * running it (the identity profile read under pgbench on two cores: 8.0k/s as such, 22.9k/s
 * prepared). Prepared, it is planned once per pooled connection. Inside a transaction it runs
 * through `em.execute` on the transaction's connection instead, so it sees the transaction's own
 * writes and commits or rolls back with it. `sql` marks each value with `?`, as `em.execute` does;
 * values are scalars (a batch travels as one JSON text).
 */
export class PreparedStatement<Row> {
  private readonly name: string;
  private readonly sql: string;
  /** The same statement with PostgreSQL's `$n` markers. */
  private readonly text: string;

  constructor(name: string, sql: string) {
    // pg keeps statements per connection by name: one name, one text, across the process.
    if (registered.has(name) && registered.get(name) !== sql) throw new Error(`Prepared statement ${name} is defined twice with different SQL.`);
    registered.set(name, sql);
    this.name = name;
    this.sql = sql;
    let marker = 0;
    this.text = sql.replace(/\?/g, () => `$${(marker += 1)}`);
  }

  async rows(em: EntityManager, values: readonly StatementValue[]): Promise<Row[]> {
    if (isInTransaction(em)) return em.execute<Row[]>(this.sql, [...values], 'all');
    const pool = await em.getConnection().getNativeClient();
    const result = await pool.query({ name: this.name, text: this.text, values: [...values] });
    return result.rows as Row[];
  }
}
