import { encodeCursor, parseCursorPage } from '@agent-platform/kit';
import { actorOf, present, type Handlers } from '@agent-platform/kit/grpc';
import type { Run as RunMessage, RunServiceService, RunStep } from '@agent-platform/proto/agents/v1/runs';
import type { Run, RunStepRow } from './runs.entity.js';
import type { ChatService } from '../chat/chat.service.js';
import type { RunsService } from './runs.service.js';

export const RUN_SERVICE_NAME = 'agentplatform.agents.v1.RunService';

/** RunService: translation only; RunsService decides, ChatService queues background runs. */
export function runHandlers(runs: RunsService, chat: ChatService, queued: () => void): Handlers<typeof RunServiceService> {
  return {
    startRun: async (request, ctx) => {
      const turn = { agentId: request.agentId, message: request.message, sessionId: present(request.sessionId), userId: present(request.userId), agentVersion: request.agentVersion };
      const run = await chat.queue(actorOf(ctx), turn, { signal: ctx.signal, requestId: ctx.requestId });
      queued();
      return { run: toMessage(run, []) };
    },

    cancelRun: async (request, ctx) => ({ run: toMessage(await runs.cancel(actorOf(ctx), request.runId), []) }),

    async *watchRun(request, ctx) {
      for await (const event of runs.watch(actorOf(ctx), request.runId, request.after, ctx.signal)) {
        const { id, type, run, step } = event;
        yield { id, type, run: toMessage(run, []), step: step ? stepMessage(step) : undefined };
      }
    },

    getRun: async (request, ctx) => {
      const { run, steps } = await runs.get(actorOf(ctx), request.runId);
      return { run: toMessage(run, steps) };
    },

    listRuns: async (request, ctx) => {
      const filter = {
        status: present(request.status),
        trigger: present(request.trigger),
        userId: present(request.userId),
        sessionId: present(request.sessionId),
        since: request.since,
        until: request.until,
        minDurationMs: request.minDurationMs,
      };
      const { items, total, hasMore } = await runs.list(actorOf(ctx), request.agentId, filter, parseCursorPage(request.page));
      const last = items.at(-1);
      return {
        items: items.map((run) => toMessage(run, [])),
        total,
        nextCursor: hasMore && last ? encodeCursor({ createdAt: last.startedAt, id: last.id }) : undefined,
      };
    },

    setRunFeedback: async (request, ctx) => ({ run: toMessage(await runs.feedback(actorOf(ctx), request.runId, request.score, present(request.comment)), []) }),

    getAgentRunStats: async (request, ctx) => {
      const stats = await runs.stats(actorOf(ctx), request.agentId, request.since, request.until);
      return {
        ...stats,
        p50DurationMs: stats.p50DurationMs ?? undefined,
        p95DurationMs: stats.p95DurationMs ?? undefined,
        feedbackMean: stats.feedbackMean ?? undefined,
      };
    },
  };
}

function toMessage(run: Run, steps: readonly RunStepRow[]): RunMessage {
  return {
    id: run.id,
    agentId: run.agentId,
    agentVersion: run.agentVersion,
    sessionId: run.sessionId ?? undefined,
    userId: run.userId ?? undefined,
    trigger: run.trigger,
    status: run.status,
    input: run.input,
    output: run.output ?? undefined,
    usage: { promptTokens: run.promptTokens, completionTokens: run.completionTokens, totalTokens: run.totalTokens },
    credits: run.credits,
    error: run.errorCode === null ? undefined : { code: run.errorCode, message: run.errorMessage ?? '' },
    parentRunId: run.parentRunId ?? undefined,
    traceId: run.traceId ?? undefined,
    startedAt: run.startedAt,
    completedAt: run.completedAt ?? undefined,
    durationMs: run.durationMs ?? undefined,
    feedback: run.feedback ? { score: run.feedback.score, comment: run.feedback.comment ?? undefined, by: run.feedback.by, at: new Date(run.feedback.at) } : undefined,
    steps: steps.map(stepMessage),
  };
}

function stepMessage(step: RunStepRow): RunStep {
  return { type: step.type, startedAt: step.startedAt, durationMs: step.durationMs, dataJson: JSON.stringify(step.data) };
}
