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
 *
 * An agent deleted through another replica takes its history with it, and is never searched again:
 * a sweep every `sweepIntervalMs` asks the database which of the agents held are gone and drops
 * their vectors, so a replica's memory does not keep them to its end.
 */
import type { AgentRef, SimilarityQuery, VectorFeed, VectorHit, VectorQuery, VectorRecord, VectorSource, VectorStore, VectorStoreLogger } from './vector-store.js';

/** What the store follows into: an embedded index that can say which agents it holds. */
export interface FollowedStore extends VectorStore {
  heldAgents(): AgentRef[] | Promise<AgentRef[]>;
}

export interface FollowingOptions {
  logger: VectorStoreLogger;
  /** How often held agents are checked for deletion elsewhere; default a minute. */
  sweepIntervalMs?: number;
}

const SWEEP_INTERVAL_MS = 60_000;

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
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly inner: FollowedStore,
    private readonly options: FollowingOptions,
  ) {
    this.kind = inner.kind;
  }

  async open(source: VectorSource): Promise<void> {
    // Taken before the index reads the items: whatever commits meanwhile is applied again, never missed.
    if (source.feed) this.openedAt = await source.feed.position();
    await this.inner.open(source);
    this.feed = source.feed;
    if (!this.feed) return;
    this.sweeper = setInterval(() => {
      this.sweep().catch((error: unknown) => this.options.logger.warn({ err: error }, 'could not look for agents deleted through another replica; will try again'));
    }, this.options.sweepIntervalMs ?? SWEEP_INTERVAL_MS).unref();
  }

  /** Drops the vectors of every held agent that the database no longer has; answers how many. */
  async sweep(): Promise<number> {
    const feed = this.feed;
    if (!feed) return 0;
    const held = await this.inner.heldAgents();
    const gone = held.length === 0 ? [] : await feed.gone(held);
    for (const agent of gone) await this.deleteAgent(agent.tenantId, agent.agentId);
    if (gone.length > 0) this.options.logger.info({ agents: gone.length }, 'dropped the vectors of agents deleted through another replica');
    return gone.length;
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
    clearInterval(this.sweeper);
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
