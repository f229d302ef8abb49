import { LRUCache } from 'lru-cache';
import type { AgentRecord } from './agents.entity.js';
import type { AgentsRepository } from './agents.repository.js';

/**
 * How long memory search may use an agent it read: the bound within which a change made through
 * another replica of agent-memory (new memory types, the agent deleted) reaches this one's
 * searches. A change made through this process is seen at once (AgentsService forgets it).
 */
export const RECENT_AGENT_TTL_MS = 2_000;
const RECENT_AGENTS_MAX = 10_000;

export interface RecentAgentsOptions {
  ttlMs?: number;
  /** Milliseconds of a monotonic clock (tests); default `performance.now`. */
  now?: () => number;
}

/**
 * Agents as memory search reads them. Every search starts with its agent (tenant, memory types),
 * so the read is kept for `RECENT_AGENT_TTL_MS` and concurrent misses share one statement: over
 * 100k items at 50 connections it was one PostgreSQL round trip of three, taken before anything
 * else could start. A missing agent is never kept, so a new one is found at once.
 */
export class RecentAgents {
  private readonly agents: LRUCache<string, AgentRecord>;
  /** Reads in flight; forget() drops one so that what it read (perhaps before the change) is not kept. */
  private readonly reads = new Map<string, Promise<AgentRecord | null>>();
  private readonly repository: Pick<AgentsRepository, 'find'>;

  constructor(repository: Pick<AgentsRepository, 'find'>, options: RecentAgentsOptions = {}) {
    this.repository = repository;
    // ttlResolution 0: age is judged on the clock at every read, not a value cached for a tick.
    this.agents = new LRUCache<string, AgentRecord>({
      max: RECENT_AGENTS_MAX,
      ttl: options.ttlMs ?? RECENT_AGENT_TTL_MS,
      ttlResolution: 0,
      ...(options.now ? { perf: { now: options.now } } : {}),
    });
  }

  find(tenantId: string, agentId: string): Promise<AgentRecord | null> {
    const key = keyOf(tenantId, agentId);
    const kept = this.agents.get(key);
    if (kept) return Promise.resolve(kept);
    const pending = this.reads.get(key);
    if (pending) return pending;
    const read = this.repository.find(tenantId, agentId).then(
      (agent) => {
        if (this.reads.get(key) === read) {
          this.reads.delete(key);
          if (agent) this.agents.set(key, agent);
        }
        return agent;
      },
      (error: unknown) => {
        if (this.reads.get(key) === read) this.reads.delete(key);
        throw error;
      },
    );
    this.reads.set(key, read);
    return read;
  }

  /** After a change to the agent has committed: the next search reads it again. */
  forget(tenantId: string, agentId: string): void {
    const key = keyOf(tenantId, agentId);
    this.agents.delete(key);
    this.reads.delete(key);
  }
}

function keyOf(tenantId: string, agentId: string): string {
  return `${tenantId}\u0000${agentId}`;
}
