import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §12.12: the principal that saved a workflow's graph (user or API key, with the key's
 * scopes), copied onto each execution of it: its agent nodes chat as that principal, so a key's
 * scopes hold through a workflow it saved. Null for graphs saved before: their creator, as before.
 */
export class GraphAuthors extends Migration {
  override up(): void {
    this.addSql(`alter table "workflows" add column "graph_author" jsonb null`);
    this.addSql(`alter table "executions" add column "graph_author" jsonb null`);
  }
}
