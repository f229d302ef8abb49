import { z } from 'zod';
import { POLICIES } from '../auth/policy.js';
import { chatMessageBody, ChatBody } from '../routes/api/v1/agents/_agent_id/chat/schemas.js';
import { agentBody } from '../routes/api/v1/agents/schemas.js';
import { AddMemoryBody, jsonText, memoryItemBody, MemoryTypeInput, SearchMemoryBody, searchResultBody } from '../routes/api/v1/memory/schemas.js';
import { executionBody, workflowSummaryBody } from '../routes/api/v1/workflows/schemas.js';
import { defineTool, type McpTool } from './tool.js';

// decisions §12.11. Each tool is its REST route's twin: the same upstream call with the caller's
// call options (callAs), the same policy row, and the same body in its answer, so tenant
// isolation, roles, scopes and credits are exactly REST's.

/** decisions §5's paging, as GET /agents and GET /workflows take it (numbers here, not query text). */
const Paging = {
  page: z.int().min(1).max(1_000_000).default(1).describe('Page number, from 1. Default 1.'),
  per_page: z.int().min(1).max(100).default(20).describe('Items per page, 1..100. Default 20.'),
};

const AgentId = z.string().min(1).describe("The agent's id (agt_…), as list_agents gives it.");

/** The six tools of the platform's MCP server, in the order tools/list gives them. */
export const MCP_TOOLS: readonly McpTool[] = [
  defineTool({
    name: 'list_agents',
    title: 'List agents',
    description:
      "Lists the agents of the tenant, newest first: {agents: [{id, name, type, description, memory_types, config, memory_extraction, tools, status, version, created_at, updated_at}], total, page, per_page}. Use an agent's id with chat_with_agent, search_memory and add_memory.",
    input: z.object(Paging),
    policy: POLICIES['GET /agents'],
    readOnly: true,
    run: async ({ page, per_page }, { app, call }) => {
      const answer = await app.agentMemory.agents.listAgents({ page: { page, perPage: per_page } }, call);
      return { agents: answer.agents.map(agentBody), total: answer.total, page, per_page };
    },
  }),
  defineTool({
    name: 'chat_with_agent',
    title: 'Chat with an agent',
    description:
      "Sends a message to an agent and answers its reply: {id (the reply's message id), role, content, status, tool_calls, usage {prompt_tokens, completion_tokens, total_tokens}, session_id, run_id (the turn's run: its steps are at GET /runs/{run_id}), model, created_at}. Pass session_id back to continue the conversation; agent_version runs a past version of the agent as it was. The agent's most relevant memories go into its context, and it may call its tools (tool_calls); status awaiting_approval means a call waits for a person's approval through the REST API. Costs ceil(total_tokens / 1000) credits a model round, at least 1 (insufficient_credits below 1).",
    input: z.object({ agent_id: AgentId, message: ChatBody.shape.message, session_id: ChatBody.shape.session_id, user_id: ChatBody.shape.user_id, agent_version: ChatBody.shape.agent_version }),
    policy: POLICIES['POST /agents/:agent_id/chat'],
    readOnly: false,
    run: async ({ agent_id, message, session_id, user_id, agent_version }, { app, call }) => {
      // Waits for a language model, which has a longer time-out than other calls (as REST's chat).
      const reply = await app.agentMemory.chat.chat(
        { agentId: agent_id, message, sessionId: session_id, userId: user_id, agentVersion: agent_version, trigger: 'mcp' },
        { ...call, deadlineMs: app.config.MODEL_DEADLINE_MS },
      );
      return chatMessageBody(reply);
    },
  }),
  defineTool({
    name: 'search_memory',
    title: "Search an agent's memory",
    description:
      "Searches an agent's memory, best match first: {results: [{id, content, score (0..1), metadata, memory_type, user_id, created_at}]}. Ranking mixes meaning with exact words, so ids and rare words are found as well as paraphrases. With user_id, only that end user's memories and the shared ones.",
    input: SearchMemoryBody.pick({ agent_id: true, query: true, top_k: true, user_id: true }),
    policy: POLICIES['POST /memory/search'],
    readOnly: true,
    run: async ({ agent_id, query, top_k, user_id }, { app, call }) => {
      // gRPC carries an absent top_k as 0, which the service reads as its default (5).
      const answer = await app.agentMemory.memory.searchMemory({ agentId: agent_id, query, topK: top_k ?? 0, userId: user_id }, call);
      return { results: answer.results.map(searchResultBody) };
    },
  }),
  defineTool({
    name: 'add_memory',
    title: "Add to an agent's memory",
    description:
      "Stores an item in an agent's memory, where its chats and search_memory find it, and answers it: {id, agent_id, memory_type, content, metadata, user_id, created_at, updated_at}. With user_id, only that end user's chats see it.",
    input: z.object({
      agent_id: AgentId,
      content: AddMemoryBody.shape.content,
      // A fact is what one adds by hand; an agent that keeps no semantic memory says so (validation_error naming memory_type).
      memory_type: MemoryTypeInput.default('semantic').describe("semantic, episodic or procedural: one of the agent's memory_types. Default semantic."),
      metadata: AddMemoryBody.shape.metadata,
      user_id: AddMemoryBody.shape.user_id,
    }),
    policy: POLICIES['POST /memory'],
    readOnly: false,
    run: async ({ agent_id, content, memory_type, metadata, user_id }, { app, call }) => {
      const answer = await app.agentMemory.memory.addMemory({ agentId: agent_id, memoryType: memory_type, content, metadataJson: jsonText(metadata), userId: user_id }, call);
      return memoryItemBody(answer.item);
    },
  }),
  defineTool({
    name: 'list_workflows',
    title: 'List workflows',
    description:
      'Lists the workflows of the tenant, newest first: {items: [{id, name, description, status (draft, active, paused), trigger_type, webhook_url, last_run_at, version, created_at, updated_at}], total, page, per_page}. Use an id with run_workflow.',
    input: z.object(Paging),
    policy: POLICIES['GET /workflows'],
    readOnly: true,
    run: async ({ page, per_page }, { app, call }) => {
      const answer = await app.workflowRunner.workflows.listWorkflows({ page: { page, perPage: per_page } }, call);
      return { items: answer.items.map((workflow) => workflowSummaryBody(workflow, app.config.WEBHOOK_HOST)), total: answer.total, page, per_page };
    },
  }),
  defineTool({
    name: 'run_workflow',
    title: 'Run a workflow',
    description:
      "Runs a workflow (draft or active; a paused one is conflict) with the given input and waits for it, at most 30 s: answers the execution {id, workflow_id, workflow_version, status, trigger, started_at, completed_at, duration_ms, input, output, error, node_executions}. A run that takes longer is answered still running; its id tells which it is.",
    input: z.object({
      workflow_id: z.string().min(1).describe("The workflow's id (wf_…), as list_workflows gives it."),
      input: z.record(z.string(), z.unknown()).describe("The trigger payload, a JSON object; the workflow's expressions see it as `input`."),
    }),
    policy: POLICIES['POST /workflows/:workflow_id/execute'],
    readOnly: false,
    run: async ({ workflow_id, input }, { app, call }) => {
      // As POST /workflows/{workflow_id}/execute with async false: wait for the end, within its deadline.
      const answer = await app.workflowRunner.executions.executeWorkflow(
        { workflowId: workflow_id, inputJson: JSON.stringify(input), wait: true, waitMs: 0 },
        { ...call, deadlineMs: app.config.EXECUTE_DEADLINE_MS },
      );
      return executionBody(answer.execution);
    },
  }),
];
