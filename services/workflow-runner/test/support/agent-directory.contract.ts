import { DomainError, newId, type Actor } from '@agent-platform/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentDirectory } from '../../src/agents/agent-directory.js';

/** An AgentDirectory, and how a test makes the agents it is asked about. */
export interface DirectoryUnderTest {
  directory: AgentDirectory;
  /** A new agent of the actor's tenant; its id. */
  addAgent(actor: Actor): Promise<string>;
  deleteAgent(actor: Actor, agentId: string): Promise<void>;
  /** The same kind of directory, with agent-memory out of reach. */
  unreachable: AgentDirectory;
  close(): Promise<void>;
}

/** A member of a new tenant, as the gateway forwards them. */
function newMember(): Actor {
  return { kind: 'user', userId: newId('user'), tenantId: newId('tenant'), role: 'member', scopes: [] };
}

/**
 * The AgentDirectory contract (decisions §13.2), a suite for each adapter: GrpcAgentDirectory over
 * the real agent-memory (agent-memory's test/agent-directory.contract.test.ts) and
 * TestAgentDirectory, the stand-in workflow-runner's tests save graphs against
 * (test/agent-directory.contract.test.ts).
 */
export function agentDirectoryContract(name: string, open: () => Promise<DirectoryUnderTest>): void {
  describe(`AgentDirectory contract: ${name}`, () => {
    let subject: DirectoryUnderTest;
    beforeAll(async () => {
      subject = await open();
    });
    afterAll(() => subject.close());

    it("finds an agent of the actor's tenant", async () => {
      const actor = newMember();
      expect(await subject.directory.exists(actor, await subject.addAgent(actor))).toBe(true);
    });

    it("finds neither another tenant's agent nor one that no tenant has", async () => {
      const [actor, other] = [newMember(), newMember()];
      const foreign = await subject.addAgent(other);
      expect(await subject.directory.exists(actor, foreign)).toBe(false);
      expect(await subject.directory.exists(actor, newId('agent'))).toBe(false);
      expect(await subject.directory.exists(other, foreign)).toBe(true);
    });

    it('no longer finds a deleted agent', async () => {
      const actor = newMember();
      const [deleted, kept] = [await subject.addAgent(actor), await subject.addAgent(actor)];
      expect(await subject.directory.exists(actor, deleted)).toBe(true);
      await subject.deleteAgent(actor, deleted);
      expect(await subject.directory.exists(actor, deleted)).toBe(false);
      expect(await subject.directory.exists(actor, kept)).toBe(true);
    });

    it('answers for whoever of the tenant asks: a viewer, an API key that may not read agents', async () => {
      const owner = { ...newMember(), role: 'owner' };
      const agentId = await subject.addAgent(owner);
      const viewer: Actor = { ...owner, role: 'viewer' };
      const key: Actor = { ...owner, kind: 'api_key', apiKeyId: newId('apiKey'), role: 'member', scopes: ['workflows:write', 'agents:write'] };
      expect(await subject.directory.exists(viewer, agentId)).toBe(true);
      expect(await subject.directory.exists(key, agentId)).toBe(true);
    });

    it('fails as service_unavailable, not as "no such agent", when agent-memory is out of reach', async () => {
      const failure = await subject.unreachable.exists(newMember(), newId('agent')).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(DomainError);
      expect(failure).toMatchObject({ code: 'service_unavailable' });
    });
  });
}
