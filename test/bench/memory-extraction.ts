/**
 * Memory extraction (decisions §14.2) through the whole local platform (`pnpm start`), offline
 * model. First, what it costs a chat turn: turns alternate between an agent that extracts and one
 * that does not, one at a time (target, issue 21: no difference at p50, since extraction runs
 * after the reply). Then its throughput: 50 connections chat with the extracting agent for the
 * load period, and the platform is left to drain; every turn must be extracted once (each is one
 * fact, so one history entry, ADD or UPDATE), and turns extracted per second are counted from the
 * load's start to the drain's end.
 * Run: node --conditions=agent-platform-source --import tsx test/bench/memory-extraction.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentPlatformClient } from '@agent-platform/client';
import { freePort } from '../e2e/harness/processes.js';
import { recordFigure } from './figures.js';
import { CONNECTIONS, describeLoad, LOAD_SECONDS, QUICK, runLoad } from './load.js';
import { dataOf, signIn, startPlatform } from './platform.js';

const TURNS = QUICK ? 100 : 400;
const WARM_UP_TURNS = 20;
const DRAIN_TIMEOUT_MS = 300_000;
const UNLIMITED = { RATE_LIMITS: 'free:100000000/100000000,pro:100000000/100000000,enterprise:0/0', WELCOME_CREDITS: '100000000' };

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

/** Every history entry of the end user's items: one per extracted turn here. */
async function extractedTurns(client: AgentPlatformClient, agentId: string, userId: string): Promise<number> {
  const { items } = dataOf(await client.GET('/api/v1/memory', { params: { query: { agent_id: agentId, user_id: userId, per_page: 100 } } }), 'listing memory');
  let entries = 0;
  for (const item of items) {
    entries += dataOf(await client.GET('/api/v1/memory/{memory_id}/history', { params: { path: { memory_id: item.id } } }), 'reading history').history.length;
  }
  return entries;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-extraction-'));
  const platform = await startPlatform({ dataDir, port: await freePort(), env: { ...UNLIMITED, EMBEDDED_PG_PORT: String(await freePort()) } });
  try {
    const { client, accessToken } = await signIn(platform.baseUrl);
    const create = async (name: string, config: Record<string, unknown>) =>
      dataOf(await client.POST('/api/v1/agents', { body: { name, type: 'assistant', memory_types: ['semantic', 'episodic'], config } }), 'creating an agent');
    const extracting = await create('Extracting', {});
    const plain = await create('Plain', { memory_extraction: false });

    const timings = { on: [] as number[], off: [] as number[] };
    for (let turn = 0; turn < WARM_UP_TURNS + TURNS; turn += 1) {
      for (const [kind, agent] of [
        ['on', extracting],
        ['off', plain],
      ] as const) {
        const started = performance.now();
        dataOf(
          await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agent.id } }, body: { message: `I moved to city number ${turn}.`, user_id: `user-${turn % 20}` } }),
          'a chat turn',
        );
        if (turn >= WARM_UP_TURNS) timings[kind].push(performance.now() - started);
      }
    }
    const onP50 = percentile(timings.on.sort((a, b) => a - b), 0.5);
    const offP50 = percentile(timings.off.sort((a, b) => a - b), 0.5);
    console.log(
      `chat turn, offline model (${TURNS} of each, alternating): extraction off p50 ${offP50.toFixed(1)} ms, p95 ${percentile(timings.off, 0.95).toFixed(1)} ms; ` +
        `on p50 ${onP50.toFixed(1)} ms, p95 ${percentile(timings.on, 0.95).toFixed(1)} ms; extraction adds ${(onP50 - offP50).toFixed(1)} ms at p50 (target: none, it runs after the reply)`,
    );
    recordFigure('chat turn with memory extraction on, over off, p50', { value: onP50 - offP50, unit: 'ms', better: 'lower' });

    // Throughput: one end user, one fact a turn; drained once every answered turn has its history entry.
    const loadUser = 'load-user';
    const started = performance.now();
    const load = await runLoad({
      url: `${platform.baseUrl}/api/v1/agents/${extracting.id}/chat`,
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'My favourite number is seven.', user_id: loadUser }),
      connections: CONNECTIONS,
      seconds: LOAD_SECONDS,
    });
    const answered = load.total - load.non2xx - load.errors;
    let extracted = await extractedTurns(client, extracting.id, loadUser);
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (extracted < answered && Date.now() < deadline) {
      await sleep(200);
      extracted = await extractedTurns(client, extracting.id, loadUser);
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = extracted / seconds;
    console.log(
      `extraction at ${CONNECTIONS} chat connections for ${LOAD_SECONDS} s: chat ${describeLoad(load)}; ${extracted} of ${answered} answered turns extracted, ` +
        `${rate.toFixed(0)} turns/s from the load's start to the drain's end (${seconds.toFixed(1)} s)${extracted === answered ? ', none left behind' : ', SOME LEFT BEHIND'}`,
    );
    if (extracted !== answered) throw new Error(`extraction left ${answered - extracted} turns behind, or extracted some twice`);
    recordFigure('memory extraction throughput at 50 chat connections', { value: rate, unit: 'turns/s', better: 'higher' });
  } finally {
    await platform.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
