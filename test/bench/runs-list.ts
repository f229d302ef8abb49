/**
 * `GET /agents/{agent_id}/runs` with BENCH_RUNS runs of the agent stored (default 100,000; issue
 * 42's target: p95 under 50 ms): real turns first, then rows like theirs written straight into
 * agent-memory's database (through the turn path they would take the machine half an hour),
 * spread over 30 days, statuses, triggers and end users. Each listing is loaded from a process of
 * its own, one request at a time (a person paging, not a load); autocannon's p99 is printed (stricter than the target's p95).
 * Run: node --conditions=agent-platform-source --import tsx test/bench/runs-list.ts
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../e2e/harness/processes.js';
import { recordFigure } from './figures.js';
import { describeLoad, QUICK, runLoad } from './load.js';
import { dataOf, signIn, startPlatform, UNLIMITED } from './platform.js';

const RUNS = Number(process.env.BENCH_RUNS ?? (QUICK ? 10_000 : 100_000));
const REAL_TURNS = 20;

const dataDir = await mkdtemp(join(tmpdir(), 'agent-platform-bench-runs-'));
const pgPort = await freePort();
const platform = await startPlatform({ dataDir, port: await freePort(), env: { ...UNLIMITED, EMBEDDED_PG_PORT: String(pgPort) } });
try {
  const { client, accessToken } = await signIn(platform.baseUrl);
  const agent = dataOf(await client.POST('/api/v1/agents', { body: { name: 'Busy', type: 'assistant', config: { memory_extraction: false } } }), 'creating an agent');
  for (let turn = 0; turn < REAL_TURNS; turn += 1) {
    dataOf(await client.POST('/api/v1/agents/{agent_id}/chat', { params: { path: { agent_id: agent.id } }, body: { message: `Question ${turn}`, user_id: `user-${turn % 7}` } }), 'a chat turn');
  }

  const password = (await readFile(join(dataDir, 'postgres-password'), 'utf8')).trim();
  const database = new pg.Client({ connectionString: `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${pgPort}/agent_platform_agents` });
  await database.connect();
  const started = performance.now();
  // Copies of a real run, each its own id, start and shape: what months of an agent's traffic leave.
  await database.query(
    `insert into runs (id, tenant_id, agent_id, agent_version, session_id, user_id, trigger, status, input, output, prompt_tokens, completion_tokens, total_tokens, credits, started_at, completed_at, duration_ms, attempts)
     select 'run_' || upper(substr(md5(random()::text), 1, 26)), r.tenant_id, r.agent_id, 1, r.session_id, 'user-' || (n % 97),
       (array['chat', 'stream', 'background', 'mcp', 'workflow'])[1 + n % 5], (array['completed', 'completed', 'completed', 'failed', 'cancelled'])[1 + n % 5],
       r.input, r.output, r.prompt_tokens, r.completion_tokens, r.total_tokens, r.credits,
       now() - make_interval(secs => (n * 2592000.0 / $2)), now() - make_interval(secs => (n * 2592000.0 / $2)) + make_interval(secs => (n % 40) / 10.0),
       (n % 4000), 0
     from generate_series(1, $2) as n, (select * from runs where agent_id = $1 limit 1) as r`,
    [agent.id, RUNS - REAL_TURNS],
  );
  // As autovacuum leaves a table that has settled: statistics, and a visibility map for index-only counts.
  await database.query('vacuum analyze runs');
  await database.end();
  console.log(`runs list: ${RUNS} runs of one agent stored (${Math.round(performance.now() - started)} ms to write the copies)`);

  const base = `${platform.baseUrl}/api/v1/agents/${agent.id}/runs`;
  const since = new Date(Date.now() - 3 * 86_400_000).toISOString();
  const listings: [string, string][] = [
    ['newest page', base],
    ['status=failed', `${base}?status=failed`],
    ['user_id', `${base}?user_id=user-42`],
    ['since 3 days', `${base}?since=${encodeURIComponent(since)}`],
    ['min_duration_ms=3900', `${base}?min_duration_ms=3900`],
  ];
  const p99s: number[] = [];
  for (const [label, url] of listings) {
    const result = await runLoad({ url, headers: { authorization: `Bearer ${accessToken}` }, connections: 1, seconds: QUICK ? 3 : 8 });
    p99s.push(result.p99);
    console.log(`  GET /agents/{agent_id}/runs (${label}): ${describeLoad(result)}`);
  }
  recordFigure(`GET /agents/{agent_id}/runs over ${RUNS} runs: worst p99 of 5 listings`, { value: Math.max(...p99s), unit: 'ms', better: 'lower', target: 50 });
} finally {
  await platform.stop();
  await rm(dataDir, { recursive: true, force: true });
}
