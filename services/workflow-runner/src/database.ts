import type { Logger } from '@agent-platform/kit';
import { initOrm, type Orm } from '@agent-platform/kit/db';
import { OutboxSchema } from '@agent-platform/kit/events';
import { ExecutionSchema, NodeExecutionSchema, ScheduleTickSchema } from './executions/executions.entity.js';
import { migrations } from './migrations/index.js';
import { WorkflowVersionSchema } from './versions/versions.entity.js';
import { WorkflowSchema } from './workflows/workflows.entity.js';

export { migrations } from './migrations/index.js';

/** Every table workflow-runner maps; its database holds nothing else. */
export const entities = [WorkflowSchema, WorkflowVersionSchema, ExecutionSchema, NodeExecutionSchema, ScheduleTickSchema, OutboxSchema];

/** Connects and brings the schema up to date (migrations run here, never in handlers). */
export function openDatabase(databaseUrl: string, logger: Logger): Promise<Orm> {
  return initOrm({ clientUrl: databaseUrl, entities, migrations, logger });
}
