import type { NamedMigration } from '@agent-platform/kit/db';
import { InitialSchema } from './0001-initial-schema.js';
import { Tools } from './0002-tools.js';
import { ToolCalls } from './0003-tool-calls.js';
import { McpTools } from './0004-mcp-tools.js';
import { MemoryScoping } from './0005-memory-scoping.js';
import { MemoryBySession } from './0006-memory-by-session.js';
import { ShortGinPendingLists } from './0007-short-gin-pending-lists.js';
import { ToolCallErrorCodes } from './0008-tool-call-error-codes.js';
import { MemoryHistoryTransactions } from './0009-memory-history-transactions.js';
import { TurnMemories } from './0010-turn-memories.js';
import { Runs } from './0011-runs.js';
import { AgentVersions } from './0012-agent-versions.js';
import { Datasets } from './0013-datasets.js';
import { BackgroundRuns } from './0014-background-runs.js';
import { UnchargedRounds } from './0015-uncharged-rounds.js';
import { AgentTools } from './0016-agent-tools.js';
import { Evals } from './0017-evals.js';
import { Documents } from './0018-documents.js';
import { MemoryReembedding } from './0019-memory-reembedding.js';
import { ChunkHeadingsSearched } from './0020-chunk-headings-searched.js';

/** Applied in this order at start. Names are stable: they are what the migrations table records. */
export const migrations: readonly NamedMigration[] = [
  { name: '0001_initial_schema', class: InitialSchema },
  { name: '0002_tools', class: Tools },
  { name: '0003_tool_calls', class: ToolCalls },
  { name: '0004_mcp_tools', class: McpTools },
  { name: '0005_memory_scoping', class: MemoryScoping },
  { name: '0006_memory_by_session', class: MemoryBySession },
  { name: '0007_short_gin_pending_lists', class: ShortGinPendingLists },
  { name: '0008_tool_call_error_codes', class: ToolCallErrorCodes },
  { name: '0009_memory_history_transactions', class: MemoryHistoryTransactions },
  { name: '0010_turn_memories', class: TurnMemories },
  { name: '0011_runs', class: Runs },
  { name: '0012_agent_versions', class: AgentVersions },
  { name: '0013_datasets', class: Datasets },
  { name: '0014_background_runs', class: BackgroundRuns },
  { name: '0015_uncharged_rounds', class: UnchargedRounds },
  { name: '0016_agent_tools', class: AgentTools },
  { name: '0017_evals', class: Evals },
  { name: '0018_documents', class: Documents },
  { name: '0019_memory_reembedding', class: MemoryReembedding },
  { name: '0020_chunk_headings_searched', class: ChunkHeadingsSearched },
];
