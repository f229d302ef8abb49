import { RUN_STATUSES, RUN_STEP_TYPES, RUN_TRIGGERS } from '@agent-platform/kit';
import { defineEntity, p } from '@mikro-orm/postgresql';

/** What a background run was asked for, kept until a worker runs it (decisions §16). */
export interface BackgroundRequest {
  sessionId: string | null;
  userId: string | null;
  /** The agent's version it runs with; null: the current one when it starts. */
  agentVersion?: number | null;
}

/** A score someone gave a run (decisions §16): the last one wins. */
export interface RunFeedback {
  score: -1 | 0 | 1;
  comment: string | null;
  by: string;
  /** ISO 8601, as JSON keeps it. */
  at: string;
}

export const RunSchema = defineEntity({
  name: 'Run',
  tableName: 'runs',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    agentId: p.string(),
    agentVersion: p.integer(),
    sessionId: p.string().strictNullable(),
    userId: p.string().strictNullable(),
    trigger: p.enum(RUN_TRIGGERS),
    status: p.enum(RUN_STATUSES),
    /** The user's message. */
    input: p.text(),
    /** The final answer; null until there is one. */
    output: p.text().strictNullable(),
    promptTokens: p.integer(),
    completionTokens: p.integer(),
    totalTokens: p.integer(),
    credits: p.integer(),
    /** Why a failed or cancelled run ended: a decisions §2 code and its text. */
    errorCode: p.text().strictNullable(),
    errorMessage: p.text().strictNullable(),
    parentRunId: p.string().strictNullable(),
    traceId: p.string().strictNullable(),
    /** The turn's user message: a continued turn finds its run by it. */
    messageId: p.string().strictNullable(),
    startedAt: p.datetime(),
    completedAt: p.datetime().strictNullable(),
    durationMs: p.integer().strictNullable(),
    feedback: p.json<RunFeedback>().columnType('jsonb').strictNullable(),
    /** Background runs: who asked, as whom the run acts (decisions §12). */
    actor: p.json<Record<string, unknown>>().columnType('jsonb').strictNullable(),
    request: p.json<BackgroundRequest>().columnType('jsonb').strictNullable(),
    /** Background runs: the replica running it, until when; and how many times one took it up. */
    leaseOwner: p.string().strictNullable(),
    leaseUntil: p.datetime().strictNullable(),
    attempts: p.integer(),
  },
});

export class Run extends RunSchema.class {}
RunSchema.setClass(Run);

export const RunStepSchema = defineEntity({
  name: 'RunStep',
  tableName: 'run_steps',
  properties: {
    runId: p.string().primary(),
    /** The step's place in its run, from 1. */
    seq: p.integer().primary(),
    type: p.enum(RUN_STEP_TYPES),
    startedAt: p.datetime(),
    durationMs: p.integer(),
    /** The step's own fields, as the REST answer shows them (decisions §16). */
    data: p.json<Record<string, unknown>>().columnType('jsonb'),
  },
});

export class RunStepRow extends RunStepSchema.class {}
RunStepSchema.setClass(RunStepRow);
