import { characters, CHAT_MESSAGE_MAX, DECISION_COMMENT_MAX, RUN_STATUSES, RUN_TRIGGERS } from '@agent-platform/kit';
import type { GetAgentRunStatsResponse, Run, RunStep, WatchRunResponse } from '@agent-platform/proto/agents/v1/runs';
import type { ServerSentEvent } from '../../../../http/sse.js';
import { z } from 'zod';
import { EndUserId, iso, isoOrNull, pathId, queryInt, queryTime, TenantQuery, Timestamp } from '../../../../http/schemas.js';
import { AgentVersionNumber, usageBody, UsageSchema } from '../agents/_agent_id/chat/schemas.js';
import { Citations } from '../memory/documents/schemas.js';

export const RunParams = z.object({ run_id: pathId('run', 'run') });

const RunError = z
  .object({ code: z.string().describe('A decisions §2 code (upstream_error, …), or cancelled.'), message: z.string() })
  .meta({ id: 'RunError', description: 'Why a run failed or was cancelled.' });

const RunFeedbackSchema = z
  .object({
    score: z.int().describe('-1, 0 or 1.'),
    comment: z.string().nullable(),
    by: z.string().describe('Who gave it: the user, or the creator of the API key used.'),
    at: Timestamp,
  })
  .meta({ id: 'RunFeedback', description: 'The last score given to the run.' });

export const RunSchema = z
  .object({
    id: z.string().describe('`run_…`'),
    agent_id: z.string(),
    agent_version: z.int().describe('The version of the agent the run ran.'),
    session_id: z.string().nullable().describe('The session the turn belongs to; null until a new session is stored with the turn.'),
    user_id: z.string().nullable().describe('The end user the turn was for (decisions §14).'),
    trigger: z.enum(RUN_TRIGGERS).describe('What started it: chat, stream, background, mcp, workflow (an agent node), agent (another agent\'s tool call) or eval.'),
    status: z.enum(RUN_STATUSES).describe('queued, running, awaiting_approval (a tool call waits for a decision), completed, failed (error says why) or cancelled.'),
    input: z.string().describe("The user's message."),
    output: z.string().nullable().describe('The final answer; null until the run completes.'),
    usage: UsageSchema.describe('Every model round of the run, summed.'),
    credits: z.int().describe('What its model rounds cost.'),
    error: RunError.nullable(),
    parent_run_id: z.string().nullable().describe('The run whose agent tool call began this one.'),
    trace_id: z.string().nullable().describe("The OpenTelemetry trace the run's request belonged to (from its traceparent, or begun by the platform when it traces)."),
    started_at: Timestamp,
    completed_at: Timestamp.nullable(),
    duration_ms: z.int().nullable().describe('From start to completion; null until it ends.'),
    feedback: RunFeedbackSchema.nullable(),
  })
  .meta({ id: 'Run', description: 'One agent turn, whatever started it (decisions §16).' });

const timing = { started_at: Timestamp, duration_ms: z.int() };

const RunStepSchema = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('retrieval'),
      ...timing,
      query: z.string().describe('What memory was searched for: the user\'s message.'),
      items: z.array(z.object({ memory_id: z.string(), score: z.number() })).describe('What was found and put in the context, most relevant first.'),
      citations: Citations.optional().describe('The document chunks among the items, as the answer cites them (absent on runs recorded before documents were cited).'),
    }),
    z.object({
      type: z.literal('model'),
      ...timing,
      round: z.int().describe('From 1.'),
      model: z.string(),
      tokens: z.object({ prompt: z.int(), completion: z.int(), total: z.int() }),
      credits: z.int(),
      finish_reason: z.enum(['stop', 'tool_calls']),
      tool_calls: z.array(z.object({ id: z.string(), name: z.string() })).describe('The calls the round asked for.'),
    }),
    z.object({
      type: z.literal('tool'),
      ...timing,
      call_id: z.string(),
      name: z.string(),
      status: z.string().describe('completed, failed or rejected.'),
      arguments: z.unknown().describe('As the model gave them; over 4 KiB of JSON: `{truncated: true, text}`.'),
      result: z.unknown().optional().describe('completed calls: the result, cut at 4 KiB like arguments.'),
      error: z.unknown().optional().describe('Other calls: why, cut at 4 KiB.'),
      run_id: z.string().nullable().describe("An agent tool's call: the run of the agent it called."),
    }),
    z.object({
      type: z.literal('approval'),
      ...timing,
      call_id: z.string(),
      decision: z.enum(['approved', 'rejected']),
      decided_by: z.string(),
    }),
    z.object({ type: z.literal('extraction'), ...timing, added: z.int(), updated: z.int(), deleted: z.int() }),
  ])
  .meta({ id: 'RunStep', description: 'What a run did, in order (decisions §16).' });

export const RunDetailSchema = RunSchema.extend({ steps: z.array(RunStepSchema) }).meta({ id: 'RunDetail', description: 'A run with its steps.' });

export const RunPage = z.object({
  items: z.array(RunSchema),
  total: z.int().describe('The runs matching the filters, counted up to 10,000: 10,000 means at least that many.'),
  next_cursor: z.string().nullable(),
});

export const RunsQuery = TenantQuery.extend({
  limit: queryInt({ min: 1, max: 100, fallback: 20, description: 'Runs per page, 1..100.' }),
  cursor: z.string().min(1).optional().describe('next_cursor of the previous page.'),
  status: z.enum(RUN_STATUSES).optional().describe('Only runs in this status.'),
  trigger: z.enum(RUN_TRIGGERS).optional().describe('Only runs started this way.'),
  user_id: EndUserId.optional().describe("Only this end user's runs."),
  session_id: z.string().min(1).optional().describe("Only this session's runs."),
  since: queryTime('Only runs started at or after this instant.'),
  until: queryTime('Only runs started before this instant.'),
  min_duration_ms: queryInt({ min: 0, max: 2_147_483_647, fallback: 0, description: 'Only ended runs that took at least this long; 0: every run.' }),
});

export const StartRunBody = z
  .object({
    message: z.string().min(1).max(CHAT_MESSAGE_MAX).describe(`What the user says: 1..${characters(CHAT_MESSAGE_MAX)} characters, not blank.`),
    session_id: z.string().min(1).optional().describe('Continues that session of the agent; absent: the run starts a new one.'),
    user_id: EndUserId.optional().describe('The end user the turn is for (decisions §14), as in chat.'),
    agent_version: AgentVersionNumber.optional(),
  })
  .meta({ examples: [{ message: 'Summarise every open ticket of customer 8812.', user_id: 'customer-8812' }] });

export const RunEventsQuery = TenantQuery.extend({
  after: queryInt({ min: 0, max: 2_147_483_647, fallback: 0, description: 'Resume after the event with this id, as the Last-Event-ID header does (the header wins).' }),
});

export const RUN_EVENTS_DESCRIPTION = [
  "The run's events as server-sent events, from the start or after `Last-Event-ID` (or `?after=`):",
  "first its status, then each step as it is stored, then how it ended; the stream ends there.",
  '',
  '```',
  'event: run.status',
  'data: <the Run>',
  '',
  'id: 1',
  'event: run.step',
  'data: <the RunStep>',
  '',
  'id: 4',
  'event: run.completed        (or run.failed, run.cancelled)',
  'data: <the Run>',
  '```',
  '',
  "Steps' ids are their places in the run; the end's is one past the last step's. A status report",
  'has no id (a run waiting for an approval reports `awaiting_approval` and the stream stays open).',
].join('\n');

export const FeedbackBody = z
  .object({
    score: z.int().describe('-1 (bad), 0 (neutral) or 1 (good).'),
    comment: z.string().max(DECISION_COMMENT_MAX).optional().describe(`Why, up to ${characters(DECISION_COMMENT_MAX)} characters.`),
  })
  .meta({ examples: [{ score: -1, comment: 'Quoted the wrong order.' }] });

export const StatsQuery = TenantQuery.extend({
  since: queryTime('Runs started at or after this instant; default: RUN_RETENTION_DAYS before until.'),
  until: queryTime('Runs started before this instant; default: now.'),
});

export const AgentStatsSchema = z
  .object({
    runs: z.int(),
    completed: z.int(),
    failed: z.int(),
    failure_rate: z.number().describe('failed ÷ ended (completed, failed, cancelled); 0 when none ended.'),
    p50_duration_ms: z.int().nullable().describe('Over ended runs; null when none ended.'),
    p95_duration_ms: z.int().nullable(),
    usage: UsageSchema,
    credits: z.int(),
    feedback_mean: z.number().nullable().describe('Mean feedback score, -1..1; null when no run has feedback.'),
    feedback_count: z.int(),
    since: Timestamp,
    until: Timestamp,
  })
  .meta({ id: 'AgentRunStats', description: "An agent's runs over a time range, summed (decisions §16)." });

export function runBody(run: Run | undefined): z.output<typeof RunSchema> {
  if (!run) throw new Error('agent-memory answered without the run.');
  return {
    id: run.id,
    agent_id: run.agentId,
    agent_version: run.agentVersion,
    session_id: run.sessionId ?? null,
    user_id: run.userId ?? null,
    trigger: run.trigger as z.output<typeof RunSchema>['trigger'],
    status: run.status as z.output<typeof RunSchema>['status'],
    input: run.input,
    output: run.output ?? null,
    usage: usageBody(run.usage),
    credits: run.credits,
    error: run.error ? { code: run.error.code, message: run.error.message } : null,
    parent_run_id: run.parentRunId ?? null,
    trace_id: run.traceId ?? null,
    started_at: iso(run.startedAt),
    completed_at: isoOrNull(run.completedAt),
    duration_ms: run.durationMs ?? null,
    feedback: run.feedback ? { score: run.feedback.score, comment: run.feedback.comment ?? null, by: run.feedback.by, at: iso(run.feedback.at) } : null,
  };
}

export function runDetailBody(run: Run | undefined): z.output<typeof RunDetailSchema> {
  return { ...runBody(run), steps: (run?.steps ?? []).map(stepBody) };
}

/** A run's stream event (decisions §16) as a server-sent event. */
export function runEventBody(event: WatchRunResponse): ServerSentEvent {
  return { event: event.type, data: event.type === 'run.step' ? stepBody(requiredStep(event.step)) : runBody(event.run), ...(event.id === undefined ? {} : { id: event.id }) };
}

function requiredStep(step: RunStep | undefined): RunStep {
  if (!step) throw new Error('agent-memory sent a step event without its step.');
  return step;
}

function stepBody(step: RunStep): z.output<typeof RunStepSchema> {
  // The step's fields are agent-memory's, as decisions §16 names them; the response schema holds them to it.
  return { ...(JSON.parse(step.dataJson) as object), type: step.type, started_at: iso(step.startedAt), duration_ms: step.durationMs } as z.output<typeof RunStepSchema>;
}

export function statsBody(stats: GetAgentRunStatsResponse): z.output<typeof AgentStatsSchema> {
  return {
    runs: stats.runs,
    completed: stats.completed,
    failed: stats.failed,
    failure_rate: stats.failureRate,
    p50_duration_ms: stats.p50DurationMs ?? null,
    p95_duration_ms: stats.p95DurationMs ?? null,
    usage: usageBody(stats.usage),
    credits: stats.credits,
    feedback_mean: stats.feedbackMean ?? null,
    feedback_count: stats.feedbackCount,
    since: iso(stats.since),
    until: iso(stats.until),
  };
}
