import type { NamedMigration } from '@agent-platform/kit/db';
import { InitialSchema } from './0001-initial-schema.js';
import { OutboxJsonAndNotify } from './0002-outbox-json-and-notify.js';
import { OutboxTraceContext } from './0003-outbox-trace-context.js';
import { SealedSigningKeys } from './0004-sealed-signing-keys.js';

/** Applied in this order at start. Names are stable: they are what the migrations table records. */
export const migrations: readonly NamedMigration[] = [
  { name: '0001_initial_schema', class: InitialSchema },
  { name: '0002_outbox_json_and_notify', class: OutboxJsonAndNotify },
  { name: '0003_outbox_trace_context', class: OutboxTraceContext },
  { name: '0004_sealed_signing_keys', class: SealedSigningKeys },
];
