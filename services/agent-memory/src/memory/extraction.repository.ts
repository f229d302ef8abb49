import type { Actor } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { MemoryExtraction } from './memory.entity.js';

/** A finished turn queued for extraction (decisions §14). */
export interface ExtractionJob {
  messageId: string;
  tenantId: string;
  agentId: string;
  sessionId: string;
  userId: string | null;
  /** The turn's run, which records the extraction as its step. */
  runId: string | null;
  /** Who chatted; extraction's model calls are charged to them. */
  actor: Actor;
}

/** A job this replica holds the lease of. */
export interface ClaimedExtraction extends ExtractionJob {
  /** Counting this claim. */
  attempt: number;
  /** When this replica claimed it: the extraction step's start. */
  claimedAt: Date;
}

/** What an extraction did. */
export interface ExtractionCounts {
  added: number;
  updated: number;
  deleted: number;
}

interface ClaimedRow {
  message_id: string;
  tenant_id: string;
  agent_id: string;
  session_id: string;
  user_id: string | null;
  run_id: string | null;
  actor: Actor | string;
  attempts: number;
}

/**
 * The extraction queue: one row per finished turn, written in the turn's transaction, leased by
 * workers with `for update skip locked`. A row's outcome is written in the same transaction as
 * the memory changes it made, guarded on the lease, so a job whose lease was lost (a worker that
 * stalled past it) changes nothing: the effect happens once however often the job runs.
 */
export class ExtractionRepository {
  constructor(
    private readonly em: EntityManager,
    private readonly workerId: string,
  ) {}

  /** In the caller's (the turn's) transaction. */
  async enqueue(job: ExtractionJob, now: Date): Promise<void> {
    const { kind, userId, tenantId, role, scopes } = job.actor;
    await this.em.insert(MemoryExtraction, {
      ...job,
      actor: { kind, userId, tenantId, role, scopes: [...scopes] },
      status: 'pending',
      attempts: 0,
      dueAt: now,
      leasedBy: null,
      leasedUntil: null,
      lastError: null,
      added: null,
      updated: null,
      deleted: null,
      credits: null,
      chargedAt: null,
      createdAt: now,
      finishedAt: null,
    });
  }

  /** Up to `limit` due jobs, oldest first, leased for `leaseMs`; each claim counts as an attempt. */
  async claim(limit: number, leaseMs: number): Promise<ClaimedExtraction[]> {
    const rows = await this.em.fork().execute<ClaimedRow[]>(
      `update "memory_extractions" set "leased_by" = ?, "leased_until" = now() + make_interval(secs => ?), "attempts" = "attempts" + 1
        where "message_id" in (
          select "message_id" from "memory_extractions"
           where "status" = 'pending' and "due_at" <= now() and ("leased_until" is null or "leased_until" < now())
           order by "due_at" limit ? for update skip locked)
        returning "message_id", "tenant_id", "agent_id", "session_id", "user_id", "run_id", "actor", "attempts"`,
      [this.workerId, leaseMs / 1000, limit],
      'all',
    );
    const claimedAt = new Date();
    return rows.map((row) => ({
      messageId: row.message_id,
      tenantId: row.tenant_id,
      agentId: row.agent_id,
      sessionId: row.session_id,
      userId: row.user_id,
      runId: row.run_id,
      actor: typeof row.actor === 'string' ? (JSON.parse(row.actor) as Actor) : row.actor,
      attempt: row.attempts,
      claimedAt,
    }));
  }

  /** Hands a job back unprocessed: due again at once, the claim not counted. */
  async release(job: ClaimedExtraction): Promise<void> {
    await this.em
      .fork()
      .execute(
        `update "memory_extractions" set "leased_by" = null, "leased_until" = null, "attempts" = "attempts" - 1 where "message_id" = ? and "leased_by" = ? and "status" = 'pending'`,
        [job.messageId, this.workerId],
        'run',
      );
  }

  /**
   * In the transaction that applies the job's changes: marks it done if this worker still holds
   * it. False when it does not (the lease expired and another worker took it): the caller then
   * rolls its changes back.
   */
  async complete(job: ClaimedExtraction, counts: ExtractionCounts, credits: number): Promise<boolean> {
    const rows = await this.em.execute<{ message_id: string }[]>(
      `update "memory_extractions" set "status" = 'done', "leased_by" = null, "leased_until" = null, "last_error" = null,
          "added" = ?, "updated" = ?, "deleted" = ?, "credits" = ?, "finished_at" = now()
        where "message_id" = ? and "leased_by" = ? and "status" = 'pending' and "attempts" = ? returning "message_id"`,
      [counts.added, counts.updated, counts.deleted, credits, job.messageId, this.workerId, job.attempt],
      'all',
    );
    return rows.length > 0;
  }

  /** A failed attempt: due again after `retryInMs`, or, with no retry left (undefined), failed for good. */
  async fail(job: ClaimedExtraction, error: string, retryInMs: number | undefined): Promise<void> {
    await this.em
      .fork()
      .execute(
        `update "memory_extractions" set "leased_by" = null, "leased_until" = null, "last_error" = ?,
            "status" = case when ?::boolean then 'pending' else 'failed' end,
            "due_at" = case when ?::boolean then now() + make_interval(secs => ?) else "due_at" end,
            "finished_at" = case when ?::boolean then null else now() end
          where "message_id" = ? and "leased_by" = ? and "status" = 'pending' and "attempts" = ?`,
        [error.slice(0, 2_000), retryInMs !== undefined, retryInMs !== undefined, (retryInMs ?? 0) / 1000, retryInMs !== undefined, job.messageId, this.workerId, job.attempt],
        'run',
      );
  }

  async markCharged(messageId: string): Promise<void> {
    await this.em.fork().execute(`update "memory_extractions" set "charged_at" = now() where "message_id" = ?`, [messageId], 'run');
  }
}
