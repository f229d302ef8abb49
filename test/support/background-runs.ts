/**
 * Background runs across a fault (decisions §16), counted the same way wherever the fault is (the
 * all-in-one process killed, one agent-memory replica of a mesh killed): runs that call a slow
 * local tool are queued, the fault happens, and once every run has ended the counts say what
 * became of them. Each run asks the tool for its own `n`, so a call run twice shows as an `n`
 * received twice.
 */
import { startReceiver, type Receiver } from '@agent-platform/kit/testing';
import type { AgentPlatformClient, Run } from '@agent-platform/client';
import { expect } from 'vitest';
import { dataOf } from '../bench/platform.js';

export interface ArmedAgent {
  tool: Receiver;
  agentId: string;
  /** The tenant's balance before any run: what was debited since is compared with what runs cost. */
  balanceBefore: number;
}

/** A tool whose every call takes `delayMs`, on an agent of the client's tenant: runs are mid-call when the fault lands. */
export async function armAgent(client: AgentPlatformClient, delayMs = 400): Promise<ArmedAgent> {
  const tool = await startReceiver({ delayMs, json: { stock: 3 } });
  const created = dataOf(
    await client.POST('/api/v1/tools', {
      body: { name: 'check_stock', description: 'Stock of an item', type: 'http', config: { url: tool.url('/stock') }, input_schema: { type: 'object', properties: { n: { type: 'integer' } } } },
    }),
    'creating the tool',
  );
  const agent = dataOf(await client.POST('/api/v1/agents', { body: { name: 'Worker', type: 'assistant', tools: [created.id], config: { memory_extraction: false } } }), 'creating the agent');
  const balanceBefore = dataOf(await client.GET('/api/v1/billing/credits'), 'balance').balance;
  return { tool, agentId: agent.id, balanceBefore };
}

/** The message that makes the offline model call the tool with `n`. */
export function stockMessage(n: number): string {
  return `Please check_stock {"n": ${n}}`;
}

/** Queues `count` background runs, n from `from`; their ids. */
export async function queueRuns(client: AgentPlatformClient, agentId: string, count: number, from = 0): Promise<string[]> {
  const ids: string[] = [];
  for (let n = from; n < from + count; n += 1) {
    const queued = await client.POST('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId } }, body: { message: stockMessage(n) } });
    expect(queued.response.status).toBe(202);
    ids.push(queued.data!.id);
  }
  return ids;
}

/** The agent's runs of one trigger, newest first. */
export async function runsOf(client: AgentPlatformClient, agentId: string, trigger: 'background' | 'eval' = 'background'): Promise<Run[]> {
  return dataOf(await client.GET('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agentId }, query: { limit: 100, trigger } } }), 'listing runs').items;
}

export interface RunsAccounting {
  completed: Run[];
  failed: Run[];
  lost: string[];
  chargedTwice: number;
  leftUncharged: number;
  callsTwice: number;
}

/**
 * Waits until every background run has ended and the debits have caught up with what the ended
 * runs cost (a turn stored just before a kill is charged by the sweep of rounds left uncharged,
 * every 30 s, of rounds 15 s old), then counts. `otherRuns` are runs of the agent charged too (an
 * eval's).
 */
export async function accountRuns(client: AgentPlatformClient, armed: ArmedAgent, started: readonly string[], otherRuns: readonly Run[] = []): Promise<RunsAccounting> {
  await expect.poll(async () => (await runsOf(client, armed.agentId)).every((run) => run.status === 'completed' || run.status === 'failed'), { timeout: 120_000, interval: 250 }).toBe(true);
  const ended = await runsOf(client, armed.agentId);
  const completed = ended.filter((run) => run.status === 'completed');
  const failed = ended.filter((run) => run.status === 'failed');
  const lost = started.filter((id) => !ended.some((run) => run.id === id && (run.status === 'completed' || run.status === 'failed')));
  const charged = [...completed, ...otherRuns].reduce((sum, run) => sum + run.credits, 0);
  const debitedNow = async () => armed.balanceBefore - dataOf(await client.GET('/api/v1/billing/credits'), 'balance').balance;
  await expect.poll(debitedNow, { timeout: 90_000, interval: 500 }).toBeGreaterThanOrEqual(charged);
  const debited = await debitedNow();
  const calls = new Map<number, number>();
  for (const request of armed.tool.received('/stock')) {
    const n = (request.json as { n: number }).n;
    calls.set(n, (calls.get(n) ?? 0) + 1);
  }
  return {
    completed,
    failed,
    lost,
    chargedTwice: Math.max(0, debited - charged),
    leftUncharged: Math.max(0, charged - debited),
    callsTwice: [...calls.values()].filter((count) => count > 1).length,
  };
}

export function describeRuns(accounting: RunsAccounting): string {
  const { completed, failed, lost, chargedTwice, leftUncharged, callsTwice } = accounting;
  return `completed ${completed.length}, failed with a reason ${failed.length}, lost ${lost.length}, charged twice ${chargedTwice} credits, left uncharged ${leftUncharged}, tool calls run twice ${callsTwice}`;
}

/** What must hold of background runs after any fault: every one ended, none lost, each charged once, no call twice. */
export function expectNothingLost(accounting: RunsAccounting, started: number): void {
  expect(accounting.lost).toEqual([]);
  expect(accounting.completed.length + accounting.failed.length).toBe(started);
  for (const run of accounting.failed) expect(run.error).toEqual({ code: 'service_unavailable', message: expect.stringContaining('no call runs twice') as unknown });
  expect(accounting.chargedTwice).toBe(0);
  expect(accounting.leftUncharged).toBe(0);
  expect(accounting.callsTwice).toBe(0);
}
