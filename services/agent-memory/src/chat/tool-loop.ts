import { isLeasedTrigger, newId, type Clock } from '@agent-platform/kit';
import type { ChatCompletion, ChatModel, ChatRequest, ToolCall } from '../models/chat-model.js';
import { sumUsage } from '../models/usage.js';
import { modelStep, toolStep } from '../runs/run-steps.js';
import type { OfferedTool, ToolOutcome } from '../tools/tool-runner.js';
import type { NewMessage, NewToolCall } from './chat.repository.js';
import { outcomeText, toolCallView } from './context.js';
import { roundOf, type TurnStore } from './turn-store.js';
import type { Turn, TurnEvent, TurnTools } from './turn.js';

export interface ToolLoopOptions {
  model: ChatModel;
  tools: TurnTools;
  store: TurnStore;
  /** When each round answered and each call finished. */
  clock: Clock;
}

/** A call as the model asked for it, resolved against the tools offered. */
interface ResolvedCall {
  row: NewToolCall;
  offered: OfferedTool | undefined;
  arguments: Record<string, unknown> | undefined;
  /** Why it cannot run at all (no such tool, arguments that are not an object). */
  problem: string | undefined;
}

/**
 * The model rounds of a turn (decisions §12): each answer's calls run side by side and go back to
 * the model, for up to `max_tool_rounds` rounds; calls that need approval stop the turn there.
 */
export class ToolLoop {
  private readonly options: ToolLoopOptions;

  constructor(options: ToolLoopOptions) {
    this.options = options;
  }

  /**
   * Model rounds until the model answers in text, or the turn stops at calls that need approval.
   * The last allowed round offers the tools with `toolChoice: none`: the model must answer then.
   */
  async *run(turn: Turn, streaming: boolean): AsyncGenerator<TurnEvent, void, undefined> {
    const { model, store, clock } = this.options;
    const tools = [...turn.offered.values()].map(({ name, description, parameters }) => ({ name, description, parameters }));
    for (;;) {
      const lastRound = turn.toolRounds >= turn.maxToolRounds;
      const request: ChatRequest = {
        ...turn.model,
        messages: turn.messages,
        ...(tools.length > 0 ? { tools, toolChoice: lastRound ? 'none' : 'auto' } : {}),
        signal: turn.context.signal,
      };
      const roundStarted = new Date(clock.now());
      const completion = streaming ? yield* this.streamRound(request) : await model.complete(request);
      const at = new Date(clock.now());
      const messageId = newId('message');
      turn.usage = sumUsage(turn.usage, completion.usage);
      const round = roundOf(completion, turn.memories);
      turn.credits += round.credits;
      const roundStep = (calls: readonly { id: string; name: string }[]) => modelStep(turn.toolRounds + 1, completion, round.credits, calls, roundStarted, at);
      const assistant: NewMessage = { id: messageId, role: 'assistant', content: completion.content, toolCallId: null, round, createdAt: at };
      turn.unsaved.messages.push(assistant);
      const answer = { id: messageId, content: completion.content, model: completion.model, at };

      if (completion.toolCalls.length === 0 || lastRound) {
        turn.run.steps.push(roundStep([]));
        yield { completed: await store.store(turn, answer, 'completed', []) };
        return;
      }

      const calls = completion.toolCalls.map((asked, position) => resolve(turn, asked, position, messageId, at));
      turn.run.steps.push(roundStep(calls.map((call) => call.row)));
      turn.toolRounds += 1;
      // A background run taken up again after its replica stopped must know its calls may have
      // run: the round that asked for them is stored before they do.
      if (isLeasedTrigger(turn.run.trigger)) await store.record(turn, 'running');
      turn.messages.push({
        role: 'assistant',
        content: completion.content,
        toolCalls: calls.map((call, index) => ({ id: call.row.id, name: call.row.name, arguments: completion.toolCalls[index]!.arguments })),
      });
      for (const [index, call] of calls.entries()) yield { toolCall: { id: call.row.id, name: call.row.name, arguments: completion.toolCalls[index]!.arguments } };

      const waiting = calls.filter((call) => call.problem === undefined && call.offered?.tool.requiresApproval === true);
      const runnable = calls.filter((call) => !waiting.includes(call));
      const outcomes = await Promise.all(runnable.map((call) => this.execute(turn, call)));
      for (const [index, call] of runnable.entries()) {
        const outcome = outcomes[index]!;
        Object.assign(call.row, {
          status: outcome.status,
          result: outcome.status === 'completed' ? outcome.result : null,
          error: outcome.status === 'failed' ? outcome.error : null,
          errorCode: outcome.status === 'failed' ? (outcome.code ?? null) : null,
          durationMs: outcome.durationMs,
          finishedAt: new Date(clock.now()),
        });
        turn.run.steps.push(toolStep({ ...call.row, childRunId: outcome.runId ?? null }, at, outcome.durationMs));
        const content = outcomeText(call.row);
        turn.messages.push({ role: 'tool', toolCallId: call.row.id, content });
        turn.unsaved.messages.push({ id: newId('message'), role: 'tool', content, toolCallId: call.row.id, round: null, createdAt: call.row.finishedAt ?? at });
        yield { toolResult: { id: call.row.id, status: call.row.status, result: call.row.result, error: call.row.error, errorCode: call.row.errorCode } };
      }
      for (const call of waiting) call.row.status = 'awaiting_approval';
      turn.unsaved.calls.push(...calls.map((call) => call.row));
      turn.calls.push(...calls.map((call) => toolCallView({ ...call.row, decidedBy: null, decidedAt: null, decisionComment: null })));

      if (waiting.length > 0) {
        yield { completed: await store.store(turn, answer, 'awaiting_approval', waiting.map((call) => call.row)) };
        return;
      }
      // Nobody waits on a background run's connection: its steps are what its watchers see, as
      // they happen; and the write finds a cancel at once.
      if (isLeasedTrigger(turn.run.trigger)) await store.record(turn, 'running');
    }
  }

  /** One streamed model round: its text pieces go out as they come. */
  private async *streamRound(request: ChatRequest): AsyncGenerator<TurnEvent, ChatCompletion, undefined> {
    const pieces = this.options.model.stream(request);
    let next = await pieces.next();
    while (!next.done) {
      yield { delta: next.value };
      next = await pieces.next();
    }
    return next.value;
  }

  private async execute(turn: Turn, call: ResolvedCall): Promise<ToolOutcome & { durationMs: number }> {
    if (call.problem !== undefined || !call.offered || !call.arguments) return { status: 'failed', error: call.problem ?? 'not runnable', durationMs: 0 };
    const caller = { agentId: turn.agent.id, runId: turn.run.id };
    return this.options.tools.run({ actor: turn.actor, offered: call.offered, arguments: call.arguments, signal: turn.context.signal, requestId: turn.context.requestId, caller });
  }
}

function resolve(turn: Turn, asked: ToolCall, position: number, messageId: string, at: Date): ResolvedCall {
  const offered = turn.offered.get(asked.name);
  let parsed: unknown;
  try {
    parsed = JSON.parse(asked.arguments === '' ? '{}' : asked.arguments);
  } catch {
    parsed = undefined;
  }
  const isObject = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed);
  const problem = !offered
    ? `no tool named "${asked.name}" is offered to this agent`
    : !isObject
      ? 'the arguments are not a JSON object'
      : undefined;
  return {
    row: {
      id: newId('toolCall'),
      tenantId: turn.actor.tenantId,
      sessionId: turn.sessionId,
      messageId,
      position,
      toolId: offered?.tool.id ?? null,
      name: asked.name,
      // What the model wrote is kept even when it is not an object: it is what went wrong.
      arguments: isObject ? parsed : asked.arguments,
      status: 'failed',
      result: null,
      error: problem ?? null,
      errorCode: null,
      durationMs: problem === undefined ? null : 0,
      createdAt: at,
      finishedAt: problem === undefined ? null : at,
    },
    offered,
    arguments: isObject ? (parsed as Record<string, unknown>) : undefined,
    problem,
  };
}
