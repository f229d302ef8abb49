import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §12.5: mcp tools. Their arguments' schemas come from the server, one per discovered
 * tool, so `input_schema` is null for them and `discovered` holds what the server listed; the
 * checks keep each column to the type it belongs to.
 */
export class McpTools extends Migration {
  override up(): void {
    this.addSql(`alter table "tools" drop constraint "tools_type_check"`);
    this.addSql(`alter table "tools" add constraint "tools_type_check" check ("type" in ('http', 'workflow', 'mcp'))`);
    this.addSql(`alter table "tools" alter column "input_schema" drop not null`);
    this.addSql(`alter table "tools" add column "discovered" jsonb null`);
    this.addSql(`alter table "tools" add constraint "tools_mcp_columns_check" check (("type" = 'mcp') = ("input_schema" is null) and ("type" = 'mcp') = ("discovered" is not null))`);
  }
}
