import type { NamedMigration } from '@agent-platform/kit/db';
import { InitialSchema } from './0001-initial-schema.js';
import { ExecutionTraceContext } from './0002-execution-trace-context.js';
import { ExecutionTriggerTool } from './0003-execution-trigger-tool.js';
import { WorkflowVersions } from './0004-workflow-versions.js';
import { WaitingAndRetries } from './0005-waiting-and-retries.js';
import { GraphAuthors } from './0006-graph-authors.js';

/** Applied in this order at start. Names are stable: they are what the migrations table records. */
export const migrations: readonly NamedMigration[] = [
  { name: '0001_initial_schema', class: InitialSchema },
  { name: '0002_execution_trace_context', class: ExecutionTraceContext },
  { name: '0003_execution_trigger_tool', class: ExecutionTriggerTool },
  { name: '0004_workflow_versions', class: WorkflowVersions },
  { name: '0005_waiting_and_retries', class: WaitingAndRetries },
  { name: '0006_graph_authors', class: GraphAuthors },
];
