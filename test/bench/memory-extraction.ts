/**
 * Memory extraction (decisions §14.2) through the whole local platform (`pnpm start`), offline
 * model. First, what it costs a chat turn: turns alternate between an agent that extracts and one
 * that does not, one at a time (target, issue 21: no difference at p50, since extraction runs
 * after the reply). Then its throughput: 50 connections, each an end user of its own, chat with
 * the extracting agent for the load period, and the platform is left to drain; every turn must be
 * extracted once (each states one fact, so one history entry, ADD or UPDATE), and turns extracted
 * per second are counted from the load's start to the drain's end.
 * Run: node --conditions=agent-platform-source --import tsx test/bench/memory-extraction.ts
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentPlatformClient } from '@agent-platform/client';
import { freePort } from '../e2e/harness/processes.js';
import { recordFigure } from './figures.js';
import { CONNECTIONS, LOAD_SECONDS, QUICK } from './load.js';
import { dataOf, signIn, startPlatform, UNLIMITED } from './platform.js';

const TURNS = QUICK ? 100 : 400;
const WARM_UP_TURNS = 20;
const DRAIN_TIMEOUT_MS = 300_000;
const LOAD_USER = 'load-user';

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? Number.NaN;
}

/** Every history entry of the agent's items: one per extracted turn here (each turn states one fact). */
async function extractedTurns(client: AgentPlatformClient, agentId: string): Promise<number> {
  let entries = 0;
  for (let page = 1; ; page += 1) {
    const { items, total } = dataOf(await client.GET('/api/v1/memory', { params: { query: { agent_id: agentId, page, per_page: 100 } } }), 'listing memory');
    const histories = await Promise.all(items.map(async (item) => dataOf(await client.GET('/api/v1/memory/{memory_id}/history', { params: { path: { memory_id: item.id } } }), 'reading history')));
    entries += histories.reduce((sum, { history }) => sum + history.length, 0);
    if (page * 100 >= total) return entries;
  }
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-extraction-'));
  const platform = await startPlatform({ dataDir, port: await freePort(), env: { ...UNLIMITED, EMBEDDED_PG_PORT: String(await freePort()) } });
  try {
    const { client } = await signIn(platform.baseUrl);
    const create = async (name: string, config: Record<string, unknown>) =>
      dataOf(await client.POST('/api/v1/agents', { body: { name, type: 'assistant', memory_types: ['semantic', 'episodic'], config } }), 'creating an agent');
    const extracting = await create('Extracting', {});
    const plain = await create('Plain', { memory_extraction: false });
    // The load's own agent, whose memory holds only what the load's turns made.
    const loaded = await create('Loaded', {});

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
        `on p50 ${onP50.toFixed(1)} ms, p95 ${percentile(timings.on, 0.95).toFixed(1)} ms; on ÷ off ${(onP50 / offP50).toFixed(2)} at p50 (target: 1, it runs after the reply)`,
    );
    // A ratio, not a difference: it stays meaningful when the two are equal, as they should be.
    recordFigure('chat turn with memory extraction on ÷ off, p50', { value: onP50 / offP50, unit: '×', better: 'lower' });

    // Throughput: 50 connections, each one end user telling a new fact every turn (its number
    // changes, so the offline rule updates the user's item); drained once every turn answered has
    // its history entry, one per extracted turn. Chat is measured alike with extraction off.
    const chatFor = async (agentId: string): Promise<{ turns: number; seconds: number; p50: number }> => {
      const until = performance.now() + LOAD_SECONDS * 1000;
      const latencies: number[] = [];
      const started = performance.now();
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async (_unused, connection) => {
          for (let turn = 0; performance.now() < until; turn += 1) {
            const sent = performance.now();
            dataOf(
              await client.POST('/api/v1/agents/{agent_id}/chat', {
                params: { path: { agent_id: agentId } },
                body: { message: `I live at number ${turn}.`, user_id: `${LOAD_USER}-${connection}` },
              }),
              'a chat turn',
            );
            latencies.push(performance.now() - sent);
          }
        }),
      );
      return { turns: latencies.length, seconds: (performance.now() - started) / 1000, p50: percentile(latencies.sort((a, b) => a - b), 0.5) };
    };
    const describeChat = (run: { turns: number; seconds: number; p50: number }) => `${(run.turns / run.seconds).toFixed(0)} turns/s, p50 ${run.p50.toFixed(0)} ms`;
    const withoutExtraction = await chatFor(plain.id);
    const started = performance.now();
    const load = await chatFor(loaded.id);
    let extracted = await extractedTurns(client, loaded.id);
    const deadline = Date.now() + DRAIN_TIMEOUT_MS;
    while (extracted < load.turns && Date.now() < deadline) {
      await sleep(200);
      extracted = await extractedTurns(client, loaded.id);
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = extracted / seconds;
    console.log(
      `chat at ${CONNECTIONS} connections (one end user each) for ${LOAD_SECONDS} s: extraction off ${describeChat(withoutExtraction)}; on ${describeChat(load)}\n` +
        `  ${extracted} of ${load.turns} turns extracted, ${rate.toFixed(0)} turns/s from the load's start to the drain's end (${seconds.toFixed(1)} s)` +
        (extracted === load.turns ? ', none left behind' : ', SOME LEFT BEHIND OR REPEATED'),
    );
    if (extracted !== load.turns) throw new Error(`${load.turns} turns were answered but ${extracted} extracted`);
    recordFigure('memory extraction throughput at 50 chat connections', { value: rate, unit: 'turns/s', better: 'higher' });
  } finally {
    await platform.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
