import { GrpcChannel, type PromiseClient } from '@agent-platform/kit/grpc';
import { AgentServiceService } from '@agent-platform/proto/agents/v1/agents';
import { ChatServiceService } from '@agent-platform/proto/agents/v1/chat';
import { MemoryServiceService } from '@agent-platform/proto/agents/v1/memory';
import fp from 'fastify-plugin';
import { HealthCheck, type HealthClient } from './grpc-health.js';

export interface AgentMemoryClients {
  /** Agents of the principal's tenant. */
  agents: PromiseClient<typeof AgentServiceService>;
  /** Chat turns (streamChat is an async iterable) and the sessions they make. */
  chat: PromiseClient<typeof ChatServiceService>;
  /** Memory items, documents, search and consolidation. */
  memory: PromiseClient<typeof MemoryServiceService>;
  health: HealthClient;
}

/** Typed clients of the agent-memory service over its own channel, closed with the app. */
export default fp(
  (app, _options, done) => {
    const channel = new GrpcChannel(app.config.AGENT_MEMORY_ADDR, { defaultDeadlineMs: app.config.GRPC_DEADLINE_MS });
    app.decorate('agentMemory', {
      agents: channel.client(AgentServiceService),
      chat: channel.client(ChatServiceService),
      memory: channel.client(MemoryServiceService),
      health: channel.client(HealthCheck),
    } satisfies AgentMemoryClients);
    app.addHook('onClose', (_instance, next) => {
      channel.close();
      next();
    });
    done();
  },
  { name: 'agent-memory', dependencies: ['config'] },
);
