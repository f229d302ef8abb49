import type { NamedMigration } from '@agent-platform/kit/db';
import { InitialSchema } from './0001-initial-schema.js';
import { DeliveryTraceContext } from './0002-delivery-trace-context.js';
import { EndpointLeaseToken } from './0003-endpoint-lease-token.js';

/** Applied in this order at start. Names are stable: they are what the migrations table records. */
export const migrations: readonly NamedMigration[] = [
  { name: '0001_initial_schema', class: InitialSchema },
  { name: '0002_delivery_trace_context', class: DeliveryTraceContext },
  { name: '0003_endpoint_lease_token', class: EndpointLeaseToken },
];
