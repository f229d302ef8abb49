import { Migration } from '@mikro-orm/migrations';

/**
 * decisions §12: the calls a chat turn's model asked for, and their results as `tool` messages.
 *
 * Messages get a position in their session (`seq`): the rows of one turn are written within the
 * same millisecond, and a call's result must still list after the answer that asked for it.
 */
export class ToolCalls extends Migration {
  override up(): void {
    this.addSql(`alter table "chat_messages" drop constraint "chat_messages_role_check"`);
    this.addSql(`alter table "chat_messages" add constraint "chat_messages_role_check" check ("role" in ('user', 'assistant', 'tool'))`);
    this.addSql(`alter table "chat_messages" add column "tool_call_id" text null`);
    this.addSql(`alter table "chat_messages" add column "seq" integer null`);
    this.addSql(`update "chat_messages" as "m" set "seq" = "n"."seq"
      from (select "id", row_number() over (partition by "session_id" order by "created_at", "id") as "seq" from "chat_messages") as "n"
      where "m"."id" = "n"."id"`);
    this.addSql(`alter table "chat_messages" alter column "seq" set not null`);
    this.addSql(`drop index "chat_messages_session_idx"`);
    this.addSql(`create unique index "chat_messages_session_seq_key" on "chat_messages" ("session_id", "seq")`);

    this.addSql(`create table "tool_calls" (
      "id" text primary key,
      "tenant_id" text not null,
      "session_id" text not null references "chat_sessions" ("id") on delete cascade,
      "message_id" text not null references "chat_messages" ("id") on delete cascade,
      "position" integer not null,
      "tool_id" text null,
      "name" text not null,
      "arguments" jsonb not null,
      "status" text not null constraint "tool_calls_status_check" check ("status" in ('awaiting_approval', 'approved', 'completed', 'failed', 'rejected')),
      "result" jsonb null,
      "error" text null,
      "duration_ms" integer null,
      "decided_by" text null,
      "decided_at" timestamptz null,
      "decision_comment" text null,
      "created_at" timestamptz not null,
      "finished_at" timestamptz null
    )`);
    this.addSql(`create index "tool_calls_message_idx" on "tool_calls" ("message_id", "position")`);
    // What keeps a session from taking a new message: a call waiting for a decision, or running after one.
    this.addSql(`create index "tool_calls_open_idx" on "tool_calls" ("session_id") where "status" in ('awaiting_approval', 'approved')`);
  }
}
