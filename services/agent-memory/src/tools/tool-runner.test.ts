import { createLogger, DomainError, hasScope, newId, roleAtLeast, ROLES, SCOPES, type Actor } from '@agent-platform/kit';
import { describe, expect, it, vi } from 'vitest';
import { RESULT_MAX_BYTES } from './tool-result.js';
import { offeredItself, type ToolCallRequest, type ToolCalls, type ToolOutcome } from './kinds/tool-kind.js';
import { TOOL_TYPES, type ToolType } from './kinds/tool-kinds.js';
import { callsOfEveryKind, ToolRunner, type ToolRun } from './tool-runner.js';
import type { Principals } from './principals.js';
import { TOOL_ACCESS } from './tool-access.js';
import { Tool } from './tools.entity.js';

const logger = createLogger({ service: 'tool-runner-test', level: 'silent' });
const SCHEMA = { type: 'object', properties: { order_id: { type: 'string' }, count: { type: 'integer', minimum: 1 } }, required: ['order_id'] };

function actorOf(tenantId = newId('tenant')): Actor {
  return { kind: 'user', userId: newId('user'), tenantId, role: 'member', scopes: [] };
}

function toolOf(actor: Actor, overrides: Partial<Pick<Tool, 'type' | 'inputSchema' | 'updatedAt' | 'tenantId'>> = {}): Tool {
  const now = new Date('2026-01-01T00:00:00Z');
  return Object.assign(new Tool(), {
    id: newId('tool'),
    tenantId: actor.tenantId,
    name: 'lookup_order',
    description: null,
    type: 'http',
    config: { url: 'https://api.example.com/orders', method: 'POST', headers: {} },
    inputSchema: SCHEMA,
    requiresApproval: false,
    createdAt: now,
    updatedAt: now,
    ...overrides,
  });
}

/** A kind whose every call is recorded and answered by `answer`. */
function recordingKind(answer: (request: ToolCallRequest) => Promise<ToolOutcome>): ToolCalls & { calls: ToolCallRequest[] } {
  const calls: ToolCallRequest[] = [];
  return {
    calls,
    call(request) {
      calls.push(request);
      return answer(request);
    },
  };
}

const completedWith = (result: unknown) => recordingKind(() => Promise.resolve({ status: 'completed', result }));
/** Never answers, and ignores its signal: only the runner's own bound can end the call. */
const deaf = () => recordingKind(() => new Promise<ToolOutcome>(() => undefined));

/** The credential as it was stated: identity's own answers are the gateway and e2e suites' to hold. */
const asStated: Principals = { confirm: (actor) => Promise.resolve(actor) };

function runnerWith(kinds: Partial<Record<ToolType, ToolCalls>>, timeoutMs = 5_000, principals = asStated): ToolRunner {
  const unused = recordingKind(() => Promise.reject(new Error('not this kind')));
  return new ToolRunner({ kinds: callsOfEveryKind((type) => kinds[type] ?? unused), principals, timeoutMs, logger });
}

function callOf(actor: Actor, tool: Tool, args: unknown, signal = new AbortController().signal): ToolRun {
  return { actor, tool, remoteName: undefined, arguments: args, signal, requestId: 'req_1' };
}

describe('ToolRunner', () => {
  it('runs the kind of the tool type with the arguments, a signal and a deadline, and measures the call', async () => {
    const http = completedWith({ ok: true });
    const workflow = completedWith({ from: 'workflow' });
    const runner = runnerWith({ http, workflow });
    const actor = actorOf();
    const before = Date.now();
    const outcome = await runner.run(callOf(actor, toolOf(actor, { type: 'workflow' }), { order_id: 'A-1' }));
    expect(outcome).toEqual({ status: 'completed', result: { from: 'workflow' }, durationMs: expect.any(Number) });
    expect(http.calls).toHaveLength(0);
    const [request] = workflow.calls;
    expect(request).toMatchObject({ actor, arguments: { order_id: 'A-1' }, requestId: 'req_1', remoteName: undefined });
    expect(request!.deadlineAt).toBeGreaterThanOrEqual(before + 5_000);
    expect(request!.signal.aborted).toBe(false);
  });

  it('refuses arguments the input schema does not allow without calling the tool, naming every mistake', async () => {
    const http = completedWith('never');
    const runner = runnerWith({ http });
    const actor = actorOf();
    const tool = toolOf(actor);
    const missing = await runner.run(callOf(actor, tool, { count: 0 }));
    expect(missing).toMatchObject({ status: 'failed', error: "arguments do not match the input schema: arguments must have required property 'order_id', arguments/count must be >= 1" });
    expect(await runner.run(callOf(actor, tool, [1, 2]))).toMatchObject({ status: 'failed', error: 'arguments must be a JSON object' });
    expect(await runner.run(callOf(actor, tool, 'order A-1'))).toMatchObject({ status: 'failed', error: 'arguments must be a JSON object' });
    expect(http.calls).toHaveLength(0);
  });

  it('compiles a schema once per tool version: a replaced tool (new updatedAt) is checked against its new schema', async () => {
    const runner = runnerWith({ http: completedWith('ok') });
    const actor = actorOf();
    const tool = toolOf(actor);
    expect((await runner.run(callOf(actor, tool, { order_id: 'A-1' }))).status).toBe('completed');
    // The same version with another schema in hand: the compiled one is reused.
    const sameVersion = Object.assign(new Tool(), { ...tool, inputSchema: { type: 'object', required: ['sku'] } });
    expect((await runner.run(callOf(actor, sameVersion, { order_id: 'A-1' }))).status).toBe('completed');
    const replaced = Object.assign(new Tool(), { ...sameVersion, updatedAt: new Date('2026-01-02T00:00:00Z') });
    expect(await runner.run(callOf(actor, replaced, { order_id: 'A-1' }))).toMatchObject({ status: 'failed', error: expect.stringContaining("required property 'sku'") });
  });

  it('a call that outlives TOOL_TIMEOUT_MS fails "timed out after N ms", even when its kind ignores the signal', async () => {
    const kind = deaf();
    const runner = runnerWith({ http: kind }, 50);
    const actor = actorOf();
    const outcome = await runner.run(callOf(actor, toolOf(actor), { order_id: 'A-1' }));
    expect(outcome).toMatchObject({ status: 'failed', error: 'timed out after 50 ms' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(45);
    const signal = kind.calls[0]!.signal;
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).name).toBe('TimeoutError');
  });

  it("a kind's own words for the abort give way to the runner's", async () => {
    const heeding = recordingKind(
      (request) => new Promise<ToolOutcome>((resolve) => request.signal.addEventListener('abort', () => resolve({ status: 'failed', error: 'request aborted' }), { once: true })),
    );
    const runner = runnerWith({ http: heeding }, 30);
    const actor = actorOf();
    expect(await runner.run(callOf(actor, toolOf(actor), { order_id: 'A-1' }))).toMatchObject({ status: 'failed', error: 'timed out after 30 ms' });
  });

  it('a cancelled turn ends the call at once as "cancelled"; a turn cancelled already calls nothing', async () => {
    const kind = deaf();
    const runner = runnerWith({ http: kind });
    const actor = actorOf();
    const turn = new AbortController();
    const running = runner.run(callOf(actor, toolOf(actor), { order_id: 'A-1' }, turn.signal));
    // Once the call is under way (the credential confirmed first).
    await vi.waitFor(() => expect(kind.calls).toHaveLength(1));
    turn.abort();
    expect(await running).toMatchObject({ status: 'failed', error: expect.stringMatching(/^cancelled/) });
    expect(kind.calls[0]!.signal.aborted).toBe(true);
    expect(await runner.run(callOf(actor, toolOf(actor), { order_id: 'A-1' }, turn.signal))).toMatchObject({ status: 'failed', error: expect.stringMatching(/^cancelled/) });
    expect(kind.calls).toHaveLength(1);
  });

  it('turns rejections into failed outcomes: a DomainError says its message, anything else hides its internals', async () => {
    const actor = actorOf();
    const unavailable = runnerWith({ http: recordingKind(() => Promise.reject(new DomainError('service_unavailable', 'workflow-runner is unavailable; try again shortly.'))) });
    expect(await unavailable.run(callOf(actor, toolOf(actor), { order_id: 'A-1' }))).toMatchObject({ status: 'failed', error: 'workflow-runner is unavailable; try again shortly.' });
    const broken = runnerWith({ http: recordingKind(() => Promise.reject(new TypeError('cannot read x of undefined at 10.0.0.3'))) });
    const outcome = await broken.run(callOf(actor, toolOf(actor), { order_id: 'A-1' }));
    expect(outcome).toMatchObject({ status: 'failed', error: 'the tool failed with an internal error (request req_1)' });
    const thrower = runnerWith({
      http: {
        call() {
          throw new Error('synchronously');
        },
      },
    });
    expect(await thrower.run(callOf(actor, toolOf(actor), { order_id: 'A-1' }))).toMatchObject({ status: 'failed' });
  });

  it('cuts a result whose JSON is over 64 KiB to its flagged beginning, and leaves a smaller one whole', async () => {
    const actor = actorOf();
    const tool = toolOf(actor);
    const rows = Array.from({ length: 5_000 }, (_, index) => ({ id: index, note: 'a "quoted" note' }));
    const cut = await runnerWith({ http: completedWith(rows) }).run(callOf(actor, tool, { order_id: 'A-1' }));
    expect(cut.status).toBe('completed');
    const result = (cut as { result: { truncated: boolean; text: string } }).result;
    expect(result.truncated).toBe(true);
    expect(result.text.startsWith('[{"id":0,"note":"a \\"quoted\\" note"}')).toBe(true);
    const size = Buffer.byteLength(JSON.stringify(result));
    expect(size).toBeLessThanOrEqual(RESULT_MAX_BYTES);
    expect(size).toBeGreaterThan(RESULT_MAX_BYTES - 100);

    // A string is cut as its own text, not as its JSON.
    const long = await runnerWith({ http: completedWith('é'.repeat(40_000)) }).run(callOf(actor, tool, { order_id: 'A-1' }));
    const text = (long as { result: { text: string } }).result.text;
    expect(text).toMatch(/^é+$/);

    const whole = { rows: rows.slice(0, 10) };
    expect(await runnerWith({ http: completedWith(whole) }).run(callOf(actor, tool, { order_id: 'A-1' }))).toMatchObject({ status: 'completed', result: whole });
    expect(await runnerWith({ http: completedWith(undefined) }).run(callOf(actor, tool, { order_id: 'A-1' }))).toMatchObject({ status: 'completed', result: null });
  });

  it("refuses a tool of another tenant than the caller's without calling it", async () => {
    const kind = completedWith('never');
    const actor = actorOf();
    const outcome = await runnerWith({ http: kind }).run(callOf(actor, toolOf(actorOf()), { order_id: 'A-1' }));
    expect(outcome).toMatchObject({ status: 'failed', error: 'the tool is not a tool of this tenant' });
    expect(kind.calls).toHaveLength(0);
  });
});

/** decisions §12: a tool acts with the turn's credential, never more. */
describe('ToolRunner and the credential of the turn', () => {
  const keyOf = (scopes: string[], role = 'owner'): Actor => ({ kind: 'api_key', userId: newId('user'), apiKeyId: newId('apiKey'), tenantId: newId('tenant'), role, scopes });

  // Every tool type against every scope a key can hold, and every role a user can have: driven by
  // TOOL_ACCESS, so a type added there is held to it here without a line more.
  const cases = TOOL_TYPES.flatMap((type) => [
    ...[...SCOPES, '*'].map((scope) => ({ type, label: `a key with only ${scope}`, actor: keyOf([scope]) })),
    ...ROLES.map((role) => ({ type, label: `a ${role}`, actor: { ...actorOf(), role } })),
  ]);
  it.each(cases)('a $type tool called by $label runs only when that credential could do it directly', async ({ type, actor }) => {
    const kind = completedWith('ran');
    const outcome = await runnerWith({ [type]: kind }).run(callOf(actor, toolOf(actor, { type }), { order_id: 'A-1' }));
    const rule = TOOL_ACCESS[type]?.rule;
    const allowed = rule === undefined || (roleAtLeast(actor.role, rule.role) && (actor.kind === 'user' || hasScope(actor.scopes, rule.scope)));
    if (allowed) {
      expect(outcome).toMatchObject({ status: 'completed', result: 'ran' });
      expect(kind.calls).toHaveLength(1);
    } else {
      expect(outcome).toMatchObject({ status: 'failed', code: 'forbidden', error: expect.stringContaining(`which a ${type} tool needs`) as unknown });
      expect(kind.calls).toHaveLength(0);
    }
  });

  it('asks whether the credential still holds before every call: revoked, the call fails unauthorized and nothing runs', async () => {
    const kind = completedWith('ran');
    const revoked = new Set<string>();
    const asked: string[] = [];
    const principals: Principals = {
      confirm: (actor) => {
        asked.push(actor.apiKeyId ?? actor.userId);
        return revoked.has(actor.apiKeyId ?? '') ? Promise.reject(new DomainError('unauthorized', 'The API key is invalid, expired or revoked.')) : Promise.resolve(actor);
      },
    };
    const runner = runnerWith({ workflow: kind }, 5_000, principals);
    const actor = keyOf(['workflows:execute']);
    const tool = toolOf(actor, { type: 'workflow' });
    expect(await runner.run(callOf(actor, tool, { order_id: 'A-1' }))).toMatchObject({ status: 'completed' });
    revoked.add(actor.apiKeyId!);
    expect(await runner.run(callOf(actor, tool, { order_id: 'A-1' }))).toMatchObject({ status: 'failed', code: 'unauthorized', error: 'The API key is invalid, expired or revoked.' });
    expect(kind.calls).toHaveLength(1);
    expect(asked).toEqual([actor.apiKeyId, actor.apiKeyId]);
  });

  it('runs the tool as the credential is now: a role lowered meanwhile refuses it, and the kind is given the confirmed actor', async () => {
    const kind = completedWith('ran');
    let role = 'member';
    const runner = runnerWith({ workflow: kind }, 5_000, { confirm: (actor) => Promise.resolve({ ...actor, role }) });
    const actor = { ...actorOf(), role: 'owner' };
    const tool = toolOf(actor, { type: 'workflow' });
    expect(await runner.run(callOf(actor, tool, { order_id: 'A-1' }))).toMatchObject({ status: 'completed' });
    expect(kind.calls[0]!.actor).toEqual({ ...actor, role: 'member' });
    role = 'viewer';
    expect(await runner.run(callOf(actor, tool, { order_id: 'A-1' }))).toMatchObject({ status: 'failed', code: 'forbidden' });
    expect(kind.calls).toHaveLength(1);
  });

  it("a refusal by the service the tool called is the same coded failure; identity away is an uncoded one", async () => {
    const refusing = recordingKind(() => Promise.reject(new DomainError('forbidden', 'This API key lacks the workflows:execute scope.')));
    const actor = actorOf();
    expect(await runnerWith({ workflow: refusing }).run(callOf(actor, toolOf(actor, { type: 'workflow' }), { order_id: 'A-1' }))).toMatchObject({
      status: 'failed',
      code: 'forbidden',
      error: 'This API key lacks the workflows:execute scope.',
    });
    const away: Principals = { confirm: () => Promise.reject(new DomainError('service_unavailable', 'identity is unavailable')) };
    const outcome = await runnerWith({ http: completedWith('ran') }, 5_000, away).run(callOf(actor, toolOf(actor), { order_id: 'A-1' }));
    expect(outcome).toEqual({ status: 'failed', error: 'identity is unavailable', durationMs: expect.any(Number) as unknown });
  });
});

describe('offeredItself', () => {
  it("offers an http or workflow tool under its own name, with its description ('' when none) and input schema", () => {
    const actor = actorOf();
    const tool = toolOf(actor, { type: 'workflow' });
    expect(offeredItself(tool)).toEqual({ name: 'lookup_order', description: '', parameters: SCHEMA, tool, remoteName: undefined });
    tool.description = 'Finds an order.';
    expect(offeredItself(tool).description).toBe('Finds an order.');
  });
});
