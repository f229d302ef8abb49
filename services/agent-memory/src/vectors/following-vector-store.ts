/**
 * An embedded index that follows the database, so that every replica of agent-memory answers a
 * search as the database is (decisions §18.6). Each replica holds its own index in its own memory;
 * the writes another replica makes reach this one through the database's record of them (the
 * source's `VectorFeed`). Before it searches an agent, the store applies that agent's changes it
 * has not seen: an item stored through any replica is found by the very next search through any
 * other. When nothing changed, that costs one indexed read of the agent's history.
 *
 * A search waits for a catch-up that began after it arrived: one begun earlier may have read the
 * database before a write the caller already saw acknowledged. Catch-ups of one agent run one at a
 * time, so an older read never lands after a newer one, and every search that arrives during one
 * shares the next.
 */
import type { SimilarityQuery, VectorFeed, VectorHit, VectorQuery, VectorRecord, VectorSource, VectorStore } from './vector-store.js';

interface AgentFollow {
  /** The feed's position this agent's vectors are up to date with. */
  position: string;
  running: Promise<void> | undefined;
  /** The catch-up that starts when `running` ends, shared by everything that arrived during it. */
  queued: Promise<void> | undefined;
}

export class FollowingVectorStore implements VectorStore {
  readonly kind: VectorStore['kind'];
  private feed: VectorFeed | undefined;
  /** Where the index stood when it opened: every agent's position until it is first caught up. */
  private openedAt = '';
  private readonly agents = new Map<string, AgentFollow>();

  constructor(private readonly inner: VectorStore) {
    this.kind = inner.kind;
  }

  async open(source: VectorSource): Promise<void> {
    // Taken before the index reads the items: whatever commits meanwhile is applied again, never missed.
    if (source.feed) this.openedAt = await source.feed.position();
    await this.inner.open(source);
    this.feed = source.feed;
  }

  upsert(records: readonly VectorRecord[]): Promise<void> {
    return this.inner.upsert(records);
  }

  async search(query: VectorQuery): Promise<VectorHit[]> {
    await this.caughtUp(query.tenantId, query.agentId);
    return this.inner.search(query);
  }

  async similarities(query: SimilarityQuery): Promise<VectorHit[]> {
    await this.caughtUp(query.tenantId, query.agentId);
    return this.inner.similarities(query);
  }

  delete(ids: readonly string[]): Promise<void> {
    return this.inner.delete(ids);
  }

  async deleteAgent(tenantId: string, agentId: string): Promise<void> {
    await this.inner.deleteAgent(tenantId, agentId);
    this.agents.delete(agentKey(tenantId, agentId));
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private caughtUp(tenantId: string, agentId: string): Promise<void> {
    const feed = this.feed;
    if (!feed) return Promise.resolve();
    const key = agentKey(tenantId, agentId);
    let follow = this.agents.get(key);
    if (!follow) {
      follow = { position: this.openedAt, running: undefined, queued: undefined };
      this.agents.set(key, follow);
    }
    const agent = follow;
    if (agent.queued) return agent.queued;
    const start = (): Promise<void> => {
      agent.queued = undefined;
      const run = this.catchUp(feed, agent, tenantId, agentId);
      agent.running = run;
      const settled = (): void => {
        if (agent.running === run) agent.running = undefined;
      };
      run.then(settled, settled);
      return run;
    };
    if (!agent.running) return start();
    agent.queued = agent.running.then(start, start);
    return agent.queued;
  }

  private async catchUp(feed: VectorFeed, agent: AgentFollow, tenantId: string, agentId: string): Promise<void> {
    const changes = await feed.changes(tenantId, agentId, agent.position);
    if (changes.records.length > 0) await this.inner.upsert(changes.records);
    if (changes.removed.length > 0) await this.inner.delete(changes.removed);
    agent.position = changes.position;
  }
}

function agentKey(tenantId: string, agentId: string): string {
  return `${tenantId}\u0000${agentId}`;
}
