import type { Actor, LeasedTrigger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import type { BackgroundRequest } from './runs.entity.js';
import { LEASED_TRIGGERS_SQL } from './runs.repository.js';

/** A background run a worker of this replica holds. */
export interface ClaimedRun {
  id: string;
  tenantId: string;
  agentId: string;
  /** Background, or an eval's item. */
  trigger: LeasedTrigger;
  actor: Actor;
  request: BackgroundRequest;
  input: string;
  /** Counting this claim: more than 1 means a replica took it up before and stopped. */
  attempts: number;
  /** When it was queued. */
  queuedAt: Date;
}

interface ClaimedRow {
  id: string;
  tenant_id: string;
  agent_id: string;
  trigger: LeasedTrigger;
  actor: Actor | string;
  request: BackgroundRequest | string;
  input: string;
  attempts: number;
  started_at: Date | string;
}

/**
 * The leases of background runs (decisions §16): which replica runs which, until when. Each
 * statement runs on its own fork: the worker loop calls them outside any request's context.
 */
export class RunLeases {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /** Background runs due, leased to `owner`: queued ones, and running ones whose replica stopped (its lease ran out). */
  async claim(owner: string, limit: number, leaseMs: number): Promise<ClaimedRun[]> {
    const rows = await this.em.fork().execute<ClaimedRow[]>(
      `update "runs" set "status" = 'running', "lease_owner" = ?, "lease_until" = now() + make_interval(secs => ?), "attempts" = "attempts" + 1
        where "id" in (
          select "id" from "runs"
           where "trigger" in (${LEASED_TRIGGERS_SQL}) and ("status" = 'queued' or ("status" = 'running' and "lease_until" < now()))
           order by "started_at" limit ? for update skip locked)
        returning "id", "tenant_id", "agent_id", "trigger", "actor", "request", "input", "attempts", "started_at"`,
      [owner, leaseMs / 1000, limit],
      'all',
    );
    return rows.map((row) => ({
      id: row.id,
      tenantId: row.tenant_id,
      agentId: row.agent_id,
      trigger: row.trigger,
      actor: typeof row.actor === 'string' ? (JSON.parse(row.actor) as Actor) : row.actor,
      request: typeof row.request === 'string' ? (JSON.parse(row.request) as BackgroundRequest) : row.request,
      input: row.input,
      attempts: row.attempts,
      queuedAt: new Date(row.started_at),
    }));
  }

  /** Holds a claimed run `leaseMs` longer; false when `owner` no longer holds it (cancelled, or taken after a stall). */
  async renew(runId: string, owner: string, leaseMs: number): Promise<boolean> {
    const rows = await this.em.fork().execute<{ id: string }[]>(
      `update "runs" set "lease_until" = now() + make_interval(secs => ?) where "id" = ? and "lease_owner" = ? and "status" = 'running' returning "id"`,
      [leaseMs / 1000, runId, owner],
      'all',
    );
    return rows.length > 0;
  }

  /** Hands a claimed run back unprocessed: due again at once, the claim not counted. */
  async release(runId: string, owner: string): Promise<void> {
    await this.em.fork().execute(
      `update "runs" set "status" = 'queued', "lease_owner" = null, "lease_until" = null, "attempts" = "attempts" - 1 where "id" = ? and "lease_owner" = ? and "status" = 'running'`,
      [runId, owner],
      'run',
    );
  }
}
