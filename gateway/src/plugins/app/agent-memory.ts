import { sendingBytesUncopied, type PromiseClient } from '@agent-platform/kit/grpc';
import { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';
import { DatasetServiceService } from '@agent-platform/proto/agents/v1/datasets';
import { DocumentServiceService } from '@agent-platform/proto/agents/v1/documents';
import { EvalServiceService } from '@agent-platform/proto/agents/v1/evals';
import { MemoryServiceService } from '@agent-platform/proto/agents/v1/memory';
import { RunServiceService } from '@agent-platform/proto/agents/v1/runs';
import { ToolServiceService } from '@agent-platform/proto/agents/v1/tools';
import fp from 'fastify-plugin';
import { openBackendChannel, type BackendPluginOptions } from './backend-channel.js';
import { HealthCheck, type HealthClient } from './grpc-health.js';

export interface AgentMemoryClients {
  /** Agents of the principal's tenant. */
  agents: PromiseClient<typeof AgentServiceService>;
  /** Chat turns (streamChat is an async iterable) and the sessions they make. */
  chat: PromiseClient<typeof ChatServiceService>;
  /** Memory items, search and consolidation. */
  memory: PromiseClient<typeof MemoryServiceService>;
  /** Documents: texts, uploaded files (uploadDocument takes a stream) and web pages. */
  documents: PromiseClient<typeof DocumentServiceService>;
  /** Tools of the principal's tenant, which agents name. */
  tools: PromiseClient<typeof ToolServiceService>;
  /** Runs of agents (decisions §16): every turn with its steps. */
  runs: PromiseClient<typeof RunServiceService>;
  /** Datasets of the principal's tenant and their items, which evals run. */
  datasets: PromiseClient<typeof DatasetServiceService>;
  /** Evals: agents run on datasets and scored. */
  evals: PromiseClient<typeof EvalServiceService>;
  health: HealthClient;
}

/** An upload's pieces (`data`, field 2 of UploadDocumentRequest) cross to agent-memory uncopied. */
const DocumentService = sendingBytesUncopied(DocumentServiceService, 'uploadDocument', { name: 'data', number: 2 });

/** Typed clients of the agent-memory service over its own channel. */
export default fp(
  (app, options: BackendPluginOptions, done) => {
    const channel = openBackendChannel(app, options, app.config.AGENT_MEMORY_ADDR);
    app.decorate('agentMemory', {
      agents: channel.client(AgentServiceService),
      chat: channel.client(ChatServiceService),
      memory: channel.client(MemoryServiceService),
      documents: channel.client(DocumentService),
      tools: channel.client(ToolServiceService),
      runs: channel.client(RunServiceService),
      datasets: channel.client(DatasetServiceService),
      evals: channel.client(EvalServiceService),
      health: channel.client(HealthCheck),
    } satisfies AgentMemoryClients);
    done();
  },
  { name: 'agent-memory', dependencies: ['config'] },
);
