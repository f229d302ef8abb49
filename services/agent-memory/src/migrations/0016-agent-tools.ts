import { Migration } from '@mikro-orm/migrations';

/** decisions §16: tools of type `agent`, whose calls are turns of another agent of the tenant. */
export class AgentTools extends Migration {
  override up(): void {
    this.addSql(`alter table "tools" drop constraint "tools_type_check"`);
    this.addSql(`alter table "tools" add constraint "tools_type_check" check ("type" in ('http', 'workflow', 'mcp', 'agent'))`);
  }
}
