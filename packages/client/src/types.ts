import type { components, paths } from './schema.js';

type Schemas = components['schemas'];

/** The JSON body `method path` answers with `status`. */
export type ResponseBody<
  Path extends keyof paths,
  Method extends keyof paths[Path],
  Status extends number = 200,
> = paths[Path][Method] extends { responses: infer Responses }
  ? Status extends keyof Responses
    ? Responses[Status] extends { content: { 'application/json': infer Body } }
      ? Body
      : never
    : never
  : never;

/** The JSON request body of `method path`. */
export type RequestBody<Path extends keyof paths, Method extends keyof paths[Path]> = paths[Path][Method] extends {
  requestBody?: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** Every failure (decisions §2): `{ error: <code>, message, details?, retry_after? }`. */
export type ApiError = Schemas['Error'];
export type ApiErrorCode = ApiError['error'];

/** The current user, with the tenants they belong to (`GET /auth/me`). */
export type User = ResponseBody<'/api/v1/auth/me', 'get'>;
/** The user a registration created, with their tenant and welcome credits. */
export type RegisteredUser = ResponseBody<'/api/v1/auth/register', 'post', 201>;
/** An access token with the refresh token that renews it (`/auth/login`, `/auth/refresh`). */
export type Tokens = ResponseBody<'/api/v1/auth/login', 'post'>;
/** An API key as lists show it: `key_prefix`, never the secret. */
export type ApiKey = ResponseBody<'/api/v1/auth/api-keys', 'get'>['items'][number];
/** A key just created: the only response that carries the secret `key`. */
export type CreatedApiKey = ResponseBody<'/api/v1/auth/api-keys', 'post', 201>;

export type Agent = Schemas['Agent'];
/** One set of settings an agent has had: memory_types, config and tools (decisions §16). */
export type AgentVersion = Schemas['AgentVersion'];
/** An agent version as the list shows it: number, time and author, without the settings. */
export type AgentVersionSummary = Schemas['AgentVersionSummary'];
export type AgentConfig = Schemas['AgentConfig'];
/** The agent's reply to a chat turn, and the data of a stream's `message.completed`. */
export type ChatMessage = Schemas['ChatMessage'];
export type TokenUsage = Schemas['TokenUsage'];
/** A chat turn's request; `streamChat` adds `stream: true` itself. */
export type ChatRequest = Omit<RequestBody<'/api/v1/agents/{agent_id}/chat', 'post'>, 'stream'>;
export type ChatSession = Schemas['ChatSession'];
export type ChatSessionMessage = Schemas['ChatSessionMessage'];
/** A call of one of the agent's tools that a model asked for in a turn. */
export type ToolCall = Schemas['ToolCall'];
/** The body of approve and reject; `streamToolCallDecision` adds `stream: true` itself. */
export type ToolCallDecision = Omit<RequestBody<'/api/v1/agents/{agent_id}/sessions/{session_id}/tool-calls/{call_id}/approve', 'post'>, 'stream'>;

/** One agent turn, whatever started it (decisions §16); `RunDetail` adds its steps. */
export type Run = Schemas['Run'];
export type RunStatus = Run['status'];
/** What started a run: chat, stream, background, mcp, workflow, agent or eval. */
export type RunTrigger = Run['trigger'];
export type RunDetail = Schemas['RunDetail'];
export type RunStep = Schemas['RunStep'];
export type AgentRunStats = Schemas['AgentRunStats'];

/** Something an agent can call (an HTTP endpoint or a workflow); header values read "***". */
export type Tool = Schemas['Tool'];

/** Inputs to evaluate agents on, each with what it should answer (decisions §16). */
export type Dataset = Schemas['Dataset'];
export type DatasetItem = Schemas['DatasetItem'];

/** An agent run on every item of a dataset and scored (decisions §16), its results and a comparison of two. */
export type Eval = Schemas['Eval'];
export type Scorer = Schemas['ScorerInput'];
export type EvalResult = Schemas['EvalResult'];
export type EvalComparison = Schemas['EvalComparison'];

export type MemoryItem = Schemas['MemoryItem'];
export type MemoryType = Schemas['MemoryType'];
export type MemorySearchResult = Schemas['MemorySearchResult'];
export type MemoryDocument = Schemas['MemoryDocument'];
/** A piece of a document as stored in memory, with the page it starts on and the headings it is under. */
export type DocumentChunk = Schemas['DocumentChunk'];
/** A document chunk a chat turn was given, and the [n] its answer cites it by (decisions §17). */
export type Citation = Schemas['Citation'];
/** A PATCH of a memory item: new content (re-embedded) and/or metadata. */
export type MemoryUpdate = RequestBody<'/api/v1/memory/{memory_id}', 'patch'>;
/** One change of a memory item (decisions §14.3): ADD, UPDATE or DELETE, and what made it. */
export type MemoryHistoryEntry = Schemas['MemoryHistoryEntry'];
export type MemoryHistory = Schemas['MemoryHistory'];

export type Workflow = Schemas['Workflow'];
export type ExecutionStatus = Schemas['ExecutionStatus'];
export type WorkflowSummary = Schemas['WorkflowSummary'];
export type WorkflowNode = Schemas['WorkflowNode'];
export type WorkflowEdge = Schemas['WorkflowEdge'];
/** One graph a workflow has had, with its nodes and edges (decisions §13.1). */
export type WorkflowVersion = Schemas['WorkflowVersion'];
/** A version as the list shows it: number, time and author, without the graph. */
export type WorkflowVersionSummary = Schemas['WorkflowVersionSummary'];
/** A workflow execution with its node executions. */
export type Execution = Schemas['WorkflowExecution'];
export type ExecutionSummary = Schemas['ExecutionSummary'];
export type NodeExecution = Schemas['NodeExecution'];
/** A node's `retry` (decisions §13): runs in all, and the first backoff, doubling. */
export type RetryPolicy = Schemas['RetryPolicy'];
/** The body of approving or rejecting a waiting approval node. */
export type NodeDecision = NonNullable<RequestBody<'/api/v1/workflows/{workflow_id}/executions/{execution_id}/nodes/{node_id}/approve', 'post'>>;

export type Webhook = Schemas['Webhook'];
/** A webhook just created: the only response besides rotate-secret that carries `signing_secret`. */
export type CreatedWebhook = ResponseBody<'/api/v1/webhooks', 'post', 201>;
export type WebhookDelivery = Schemas['WebhookDelivery'];

/** The tenant's balance, low-credit threshold and plan (`GET /billing/credits`). */
export type Credits = ResponseBody<'/api/v1/billing/credits', 'get'>;
