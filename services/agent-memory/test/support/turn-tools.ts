import type { Receiver } from '@agent-platform/kit/testing';
import type { AgentMemoryHarness, TestTenant } from './harness.js';

/** The tools' input: an object with an integer `n`, and anything else besides. */
export const NUMBER_SCHEMA = JSON.stringify({ type: 'object', properties: { n: { type: 'integer' } }, additionalProperties: true });

/** An http tool of the tenant that calls `path` on the receiver; the offline model calls it when a message names it. */
export async function httpTool(service: Pick<AgentMemoryHarness, 'tools'>, tenant: TestTenant, receiver: Receiver, name: string, path: string, requiresApproval = false): Promise<string> {
  const { tool } = await service.tools.createTool(
    { name, description: `Calls ${path}`, type: 'http', configJson: JSON.stringify({ url: receiver.url(path) }), inputSchemaJson: NUMBER_SCHEMA, requiresApproval },
    { principal: tenant.principal },
  );
  return tool!.id;
}

/** A new agent of the tenant with these tools; it remembers nothing unless given memory types. */
export async function agentWith(service: Pick<AgentMemoryHarness, 'agents'>, tenant: TestTenant, tools: string[], config: Record<string, unknown> = {}, memoryTypes: string[] = []): Promise<string> {
  const { agent } = await service.agents.createAgent(
    { name: 'Doer', type: 'assistant', memoryTypes, tools, configJson: JSON.stringify(config) },
    { principal: tenant.principal },
  );
  return agent!.id;
}
