import { DomainError, timedSignal, untilAborted, type Actor, type Logger } from '@agent-platform/kit';
import type { OfferedTool as OfferedStoredTool, ToolCaller, ToolCallRequest, ToolCalls, ToolOutcome } from './kinds/tool-kind.js';
import { TOOL_TYPES, type ToolType } from './kinds/tool-kinds.js';
import type { Principals } from './principals.js';
import { ArgumentValidator } from './tool-arguments.js';
import { requireToolAccess } from './tool-access.js';
import { fitResult } from './tool-result.js';
import type { Tool } from './tools.entity.js';

export type { ToolCallRequest, ToolOutcome } from './kinds/tool-kind.js';

/** What the model is offered of a tool, as a turn holds it: of a tool as stored. */
export type OfferedTool = OfferedStoredTool<Tool>;

/** The handler that runs each tool type's calls (each kind's `calls`). */
export type ToolKinds = Record<ToolType, ToolCalls>;

/** A handler for every tool type, each made by `handlerOf`. */
export function callsOfEveryKind(handlerOf: (type: ToolType) => ToolCalls): ToolKinds {
  return Object.fromEntries(TOOL_TYPES.map((type) => [type, handlerOf(type)])) as ToolKinds;
}

/** One call as the chat turn hands it over: the model's arguments as they came, unchecked. */
export interface ToolRun {
  actor: Actor;
  tool: Tool;
  remoteName: string | undefined;
  arguments: unknown;
  /** The turn's: aborted when the turn is cancelled (the client left). */
  signal: AbortSignal;
  requestId: string | undefined;
  /** The turn that asked for the call. */
  caller?: ToolCaller | undefined;
}

export type ToolRunOutcome = ToolOutcome & { durationMs: number };

export interface ToolRunnerOptions {
  kinds: ToolKinds;
  /** Asked before every call whether the turn's credential still holds, and what it may do now. */
  principals: Principals;
  /** TOOL_TIMEOUT_MS: each call's bound, ms. */
  timeoutMs: number;
  logger: Logger;
}

/**
 * Runs one tool call for a chat turn (decisions §12) and always answers with an outcome: a failing,
 * refused or timed-out tool is an error result for the model, never an error of the turn.
 * First the turn's credential is confirmed (revoked meanwhile: unauthorized) and held to what the
 * tool does on the platform (TOOL_ACCESS: forbidden), so nothing runs that the credential could
 * not run directly; then the arguments are checked against the tool's input schema. Each call is
 * bounded by TOOL_TIMEOUT_MS whether or not its kind heeds its signal; results are cut at 64 KiB
 * of JSON.
 */
export class ToolRunner {
  private readonly options: ToolRunnerOptions;
  private readonly validator = new ArgumentValidator();

  constructor(options: ToolRunnerOptions) {
    this.options = options;
  }

  async run(call: ToolRun): Promise<ToolRunOutcome> {
    const started = performance.now();
    const outcome = await this.outcomeOf(call);
    return { ...outcome, durationMs: Math.round(performance.now() - started) };
  }

  private async outcomeOf(call: ToolRun): Promise<ToolOutcome> {
    // The chat turn reads tools in the caller's tenant; this holds that even if a caller did not.
    if (call.tool.tenantId !== call.actor.tenantId) return failed('the tool is not a tool of this tenant');
    if (call.signal.aborted) return failed(CANCELLED);
    const { timeoutMs } = this.options;
    const bound = timedSignal(timeoutMs, call.signal, { timeout: () => new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError') });
    const { signal } = bound;
    const deadlineAt = Date.now() + timeoutMs;
    try {
      const actor = await untilAborted(this.options.principals.confirm(call.actor, call.requestId), signal);
      requireToolAccess(actor, call.tool.type);
      const problem = this.validator.check(call.tool, call.remoteName, call.arguments);
      if (problem !== undefined) return failed(problem);
      const request: ToolCallRequest = {
        actor,
        tool: call.tool,
        remoteName: call.remoteName,
        arguments: call.arguments as Record<string, unknown>,
        caller: call.caller,
        signal,
        requestId: call.requestId,
        deadlineAt,
      };
      const outcome = await untilAborted(this.options.kinds[call.tool.type].call(request), signal);
      if (outcome.status === 'completed') return { status: 'completed', result: fitResult(outcome.result), ...(outcome.runId === undefined ? {} : { runId: outcome.runId }) };
      // A kind's own words for the abort ("aborted", "request timed out") give way to the runner's.
      return signal.aborted ? this.abortedOutcome(call) : outcome;
    } catch (error) {
      if (signal.aborted) return this.abortedOutcome(call);
      return refusalOf(error) ?? failed(this.describe(error, call));
    } finally {
      bound.dispose();
    }
  }

  private abortedOutcome(call: ToolRun): ToolOutcome {
    return failed(call.signal.aborted ? CANCELLED : `timed out after ${this.options.timeoutMs} ms`);
  }

  /**
   * A DomainError's message is written for callers (a workflow-runner that is away says so);
   * anything else is unexpected: logged with the request id, and not shown, as §2 has it.
   */
  private describe(error: unknown, call: ToolRun): string {
    if (error instanceof DomainError && error.code !== 'internal_error') return error.message;
    this.options.logger.error({ err: error, request_id: call.requestId, tool_id: call.tool.id, tool_type: call.tool.type }, 'tool call failed unexpectedly');
    return `the tool failed with an internal error${call.requestId ? ` (request ${call.requestId})` : ''}`;
  }
}

const CANCELLED = 'cancelled: the turn ended before the tool answered';

/** The credential refused, here or by the service the tool called: a coded failure, the message the refusal's. */
function refusalOf(error: unknown): ToolOutcome | undefined {
  if (error instanceof DomainError && (error.code === 'forbidden' || error.code === 'unauthorized')) return { status: 'failed', error: error.message, code: error.code };
  return undefined;
}

function failed(error: string): ToolOutcome {
  return { status: 'failed', error };
}
