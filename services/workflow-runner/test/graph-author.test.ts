import { PrincipalKind } from '@agent-platform/kit/grpc';
import { describe, expect, vi } from 'vitest';
import type { AgentTurn } from '../src/agents/agent-chat.js';
import { databaseTest, echoAgents, newTenant, startRunner, TestAgentDirectory, type TestTenant } from './support/harness.js';

// decisions §12.12: agent nodes chat as the principal that saved the graph they run (a key keeps
// its id and scopes), stored with the workflow and with each execution, so the principal holds
// across a wait and a restart of the runner.

const ENV = { EXECUTION_POLL_INTERVAL_MS: '100' };

function keyOf(tenant: TestTenant, scopes: string[]): TestTenant {
  return { tenantId: tenant.tenantId, principal: { ...tenant.principal, kind: PrincipalKind.KIND_API_KEY, apiKeyId: 'key_01JD0000000000000000000001', scopes } };
}

describe('the author of a graph', { timeout: 60_000 }, () => {
  databaseTest('is who saved it last; its agent nodes chat as it, after a wait and a restart too', async ({ database, onTestFinished }) => {
    const turns: AgentTurn[] = [];
    const agents = { chat: (turn: AgentTurn) => (turns.push(turn), echoAgents.chat(turn)) };
    const directory = new TestAgentDirectory();
    let runner = await startRunner(database, ENV, { agents, directory });
    const owner = newTenant();
    const key = keyOf(owner, ['workflows:write', 'workflows:execute', 'agents:write']);
    const agentId = directory.add(owner.tenantId);
    const ask = (message: string) => ({ nodes: [{ id: 'ask', type: 'agent', config: { agent_id: agentId, message } }] });

    const { workflow } = await runner.workflows.createWorkflow({ name: 'Ask', nodesJson: JSON.stringify(ask('hello').nodes), edgesJson: '[]' }, { principal: key.principal });
    await runner.runSync(owner, workflow!.id);
    expect(turns.at(-1)!.author).toEqual({ kind: 'api_key', userId: key.principal.userId, apiKeyId: 'key_01JD0000000000000000000001', scopes: key.principal.scopes });

    // Saved again by a user: they are its author now, whoever created it.
    await runner.workflows.updateWorkflow({ workflowId: workflow!.id, nodesJson: JSON.stringify(ask('hello again').nodes) }, { principal: owner.principal });
    await runner.runSync(owner, workflow!.id);
    expect(turns.at(-1)!.author).toEqual({ kind: 'user', userId: owner.principal.userId, apiKeyId: null, scopes: [] });

    // A key's graph that waits, run to its end by a runner started afresh: the author comes from the execution's row.
    const waiting = await runner.workflows.createWorkflow(
      {
        name: 'Later',
        nodesJson: JSON.stringify([{ id: 'pause', type: 'wait', config: { seconds: 1 } }, ...ask('later').nodes]),
        edgesJson: JSON.stringify([{ source: 'pause', target: 'ask' }]),
      },
      { principal: key.principal },
    );
    const parked = await runner.runSync(owner, waiting.workflow!.id);
    expect(parked.status).toBe('waiting');
    await runner.stop();
    runner = await startRunner(database, ENV, { agents, directory });
    onTestFinished(() => runner.stop());
    await vi.waitFor(() => expect(turns.at(-1)!.message).toBe('later'), { timeout: 20_000, interval: 100 });
    expect(turns.at(-1)!.author).toMatchObject({ kind: 'api_key', apiKeyId: 'key_01JD0000000000000000000001' });
  });
});
