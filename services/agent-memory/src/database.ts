import type { Logger } from '@agent-platform/kit';
import { initOrm, type Orm } from '@agent-platform/kit/db';
import { OutboxSchema } from '@agent-platform/kit/events';
import { AgentVersionSchema } from './agents/agent-versions.entity.js';
import { AgentSchema } from './agents/agents.entity.js';
import { MessageSchema, SessionSchema, ToolCallSchema } from './chat/chat.entity.js';
import { DatasetItemSchema, DatasetSchema } from './datasets/datasets.entity.js';
import { EvalResultSchema, EvalSchema } from './evals/evals.entity.js';
import { DocumentFileSchema, MemoryDocumentSchema } from './documents/documents.entity.js';
import { MemoryExtractionSchema, MemoryHistorySchema, MemoryItemSchema } from './memory/memory.entity.js';
import { migrations } from './migrations/index.js';
import { RunSchema, RunStepSchema } from './runs/runs.entity.js';
import { ToolSchema } from './tools/tools.entity.js';

export { migrations } from './migrations/index.js';

/** Every table agent-memory maps; its database holds nothing else. */
export const entities = [AgentSchema, AgentVersionSchema, SessionSchema, MessageSchema, ToolCallSchema, MemoryItemSchema, MemoryDocumentSchema, DocumentFileSchema, MemoryHistorySchema, MemoryExtractionSchema, ToolSchema, RunSchema, RunStepSchema, DatasetSchema, DatasetItemSchema, EvalSchema, EvalResultSchema, OutboxSchema];

/** Connects and brings the schema up to date (migrations run here, never in handlers). */
export function openDatabase(databaseUrl: string, logger: Logger): Promise<Orm> {
  return initOrm({ clientUrl: databaseUrl, entities, migrations, logger });
}
