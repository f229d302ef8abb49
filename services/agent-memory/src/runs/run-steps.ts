// decisions §16: the steps a run records, each as the REST answer shows it.
import { citationsOf } from '../documents/citations.js';
import type { Ranked } from '../memory/hybrid-ranking.js';
import type { MemoryItemView } from '../memory/memory-items.js';
import type { ChatCompletion } from '../models/chat-model.js';
import { fitResult } from '../tools/tool-result.js';
import { citationBody, type RunStepType } from '@agent-platform/kit';

/** A tool step's arguments, result and error are cut to this many bytes of JSON each. */
export const STEP_VALUE_MAX_BYTES = 4_096;

/** A step to store; its place in the run (`seq`) is given when it is written. */
export interface NewRunStep {
  type: RunStepType;
  startedAt: Date;
  durationMs: number;
  data: Record<string, unknown>;
}

function timed(type: RunStepType, startedAt: Date, endedAt: Date, data: Record<string, unknown>): NewRunStep {
  return { type, startedAt, durationMs: Math.max(0, endedAt.getTime() - startedAt.getTime()), data };
}

/** What the turn searched its memory for, what it found with which scores, and the document chunks among them (decisions §17). */
export function retrievalStep(query: string, found: readonly Ranked<MemoryItemView>[], startedAt: Date, endedAt: Date): NewRunStep {
  const citations = citationsOf(found.map(({ candidate }) => candidate)).map(citationBody);
  return timed('retrieval', startedAt, endedAt, { query, items: found.map(({ candidate, score }) => ({ memory_id: candidate.id, score })), citations });
}

/**
 * One model round: which model, its tokens and cost, why it stopped (answered, or asked for
 * calls), and the calls it asked for that the turn runs, by the platform's ids for them.
 */
export function modelStep(round: number, completion: ChatCompletion, credits: number, calls: readonly { id: string; name: string }[], startedAt: Date, endedAt: Date): NewRunStep {
  const { promptTokens, completionTokens, totalTokens } = completion.usage;
  return timed('model', startedAt, endedAt, {
    round,
    model: completion.model,
    tokens: { prompt: promptTokens, completion: completionTokens, total: totalTokens },
    credits,
    finish_reason: completion.toolCalls.length > 0 ? 'tool_calls' : 'stop',
    tool_calls: calls.map(({ id, name }) => ({ id, name })),
  });
}

/** A finished call as its step keeps it. */
export interface FinishedToolCall {
  id: string;
  name: string;
  status: string;
  arguments: unknown;
  result: unknown;
  error: string | null;
  /** The run of the agent a call of an `agent` tool handed the message to. */
  childRunId?: string | null;
}

/** A tool call, from when it began to run to its outcome; its values cut at STEP_VALUE_MAX_BYTES. */
export function toolStep(call: FinishedToolCall, startedAt: Date, durationMs: number): NewRunStep {
  return { type: 'tool', startedAt, durationMs, data: {
    call_id: call.id,
    name: call.name,
    status: call.status,
    arguments: fitResult(call.arguments, STEP_VALUE_MAX_BYTES),
    ...(call.status === 'completed' ? { result: fitResult(call.result, STEP_VALUE_MAX_BYTES) } : { error: call.error === null ? null : fitResult(call.error, STEP_VALUE_MAX_BYTES) }),
    run_id: call.childRunId ?? null,
  } };
}

/** A person's decision on a call that waited for one. */
export function approvalStep(callId: string, approved: boolean, decidedBy: string, at: Date): NewRunStep {
  return timed('approval', at, at, { call_id: callId, decision: approved ? 'approved' : 'rejected', decided_by: decidedBy });
}

/** What the turn's memory extraction changed (decisions §14). */
export function extractionStep(counts: { added: number; updated: number; deleted: number }, startedAt: Date, endedAt: Date): NewRunStep {
  return timed('extraction', startedAt, endedAt, { added: counts.added, updated: counts.updated, deleted: counts.deleted });
}
