/**
 * deploy/observability against the real tools (decisions §18.5): promtool checks and unit-tests the
 * rules; every alert links a runbook section that exists; a real Prometheus scrapes the mesh, loads
 * the rules without an evaluation error, and every series a rule names is one the platform exports.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startReceiver, type Receiver } from '@agent-platform/kit/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { buildDashboards, dashboardQueries } from '../../deploy/observability/dashboards/dashboards.js';
import { Api, newAccount } from '../e2e/harness/client.js';
import { REPO_ROOT } from '../e2e/harness/processes.js';
import { startDistributedPlatform, type DistributedPlatform } from '../e2e/harness/setup-distributed.js';
import { activate, createWorkflow, hookPath } from '../e2e/harness/workflows.js';

const RULES_DIR = join(REPO_ROOT, 'deploy/observability/prometheus');
const DASHBOARDS_DIR = join(REPO_ROOT, 'deploy/observability/dashboards');

/** KEDA's queries in the prod overlay: they scale on series the platform must export too. */
const kedaQueries = parseAllDocuments(await readFile(join(REPO_ROOT, 'deploy/k8s/overlays/prod/keda-scaling.yaml'), 'utf8'))
  .map((document) => document.toJS() as { spec: { triggers: { type: string; metadata: { query?: string } }[] } })
  .flatMap((object) => object.spec.triggers.flatMap((trigger) => (trigger.metadata.query ? [trigger.metadata.query] : [])));

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  annotations?: Record<string, string>;
}
const rules = (parse(await readFile(join(RULES_DIR, 'rules.yaml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);

// PromQL's own words, which look like series names in an expression.
const PROMQL_WORDS = new Set(['sum', 'by', 'and', 'or', 'unless', 'rate', 'max', 'min', 'histogram_quantile', 'le', 'without', 'on', 'ignoring', 'avg', 'count', 'increase']);

/** The series an expression reads: identifiers before `{`, `[` or `)`, that are neither functions, keywords, labels nor recorded rules (`a:b`). */
function seriesOf(expr: string): string[] {
  const withoutStrings = expr.replace(/"[^"]*"/g, '""');
  // Range selectors go too: `[5m]`, or Grafana's `[$__rate_interval]`.
  const withoutLabelSets = withoutStrings.replace(/\{[^}]*\}/g, '{}').replace(/\[[^\]]*\]/g, '').replace(/\bby \([^)]*\)/g, '');
  const names = [...withoutLabelSets.matchAll(/(?<![\w:])([a-z_][a-z0-9_]*)(?![\w:(])/g)].map((match) => match[1]!);
  return names.filter((name) => !PROMQL_WORDS.has(name) && !/^\d/.test(name));
}

describe('the Prometheus rules', () => {
  it('pass promtool check rules and their unit tests (promtool test rules)', () => {
    const check = spawnSync('promtool', ['check', 'rules', 'rules.yaml'], { cwd: RULES_DIR, encoding: 'utf8' });
    expect(check.stdout + check.stderr).toContain('SUCCESS');
    expect(check.status).toBe(0);
    const test = spawnSync('promtool', ['test', 'rules', 'rules.test.yaml'], { cwd: RULES_DIR, encoding: 'utf8' });
    expect(test.stdout + test.stderr).toContain('SUCCESS');
    expect(test.status).toBe(0);
  });

  it('give every alert a unit test and a runbook_url into a section of docs/runbooks.md', async () => {
    const runbooks = await readFile(join(REPO_ROOT, 'docs/runbooks.md'), 'utf8');
    const anchors = new Set([...runbooks.matchAll(/^## (.+)$/gm)].map((match) => match[1]!.toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
    const tests = await readFile(join(RULES_DIR, 'rules.test.yaml'), 'utf8');
    const alerts = rules.filter((rule) => rule.alert !== undefined);
    expect(alerts.length).toBeGreaterThanOrEqual(10);
    for (const alert of alerts) {
      const url = alert.annotations?.runbook_url ?? '';
      expect(url, alert.alert).toMatch(/\/docs\/runbooks\.md#[a-z0-9-]+$/);
      expect(anchors, `${alert.alert}: ${url}`).toContain(url.split('#')[1]);
      expect(tests, `${alert.alert} has a firing test`).toMatch(new RegExp(`alertname: ${alert.alert}\\n\\s+exp_alerts:`));
    }
  });
});

describe('the Grafana dashboards', () => {
  it('are committed as `pnpm dashboards` builds them: an overview and one per part', async () => {
    const built = buildDashboards();
    expect(Object.keys(built).sort()).toEqual(['agent-memory.json', 'gateway.json', 'identity.json', 'overview.json', 'webhook-dispatcher.json', 'workflow-runner.json']);
    for (const [file, dashboard] of Object.entries(built)) {
      expect(JSON.parse(await readFile(join(DASHBOARDS_DIR, file), 'utf8')), `${file}: run pnpm dashboards`).toEqual(JSON.parse(JSON.stringify(dashboard)));
    }
  });

  it('read only recorded rules that exist', () => {
    const recorded = new Set(rules.flatMap((rule) => (rule.record ? [rule.record] : [])));
    const used = dashboardQueries().flatMap((expr) => [...expr.matchAll(/[a-z_]+:[a-z0-9_:]+/g)].map((match) => match[0]));
    expect(used.length).toBeGreaterThan(0);
    for (const name of used) expect(recorded, name).toContain(name);
  });
});

describe('a real Prometheus scraping the mesh', () => {
  let platform: DistributedPlatform;
  let receiver: Receiver;
  let prometheus: ReturnType<typeof spawn> | undefined;
  let promUrl: string;
  let dir: string;

  beforeAll(async () => {
    platform = await startDistributedPlatform({ env: { RATE_LIMITS: 'free:0/0,pro:0/0,enterprise:0/0' } });
    receiver = await startReceiver();
    dir = await mkdtemp(join(tmpdir(), 'prometheus-'));
    // One job per part, named after it, as the rules expect (Kubernetes: by the pods' app label).
    const jobs = Object.entries(Object.groupBy(platform.mesh.replicas, (replica) => replica.part)).map(([part, replicas]) => ({
      job_name: part,
      scrape_interval: '1s',
      static_configs: [{ targets: replicas.map((replica) => `127.0.0.1:${replica.ports.metrics}`) }],
    }));
    await writeFile(join(dir, 'prometheus.yml'), JSON.stringify({ global: { evaluation_interval: '1s' }, rule_files: [join(RULES_DIR, 'rules.yaml')], scrape_configs: jobs }));
    const port = await freePort();
    promUrl = `http://127.0.0.1:${port}`;
    prometheus = spawn('prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore' });

    // Traffic that makes every part export what the rules read: API reads and writes, an event
    // through the outbox to a delivered webhook, a chat turn.
    const api = new Api(platform.baseUrl);
    const account = await newAccount(api);
    const client = api.withToken(account.accessToken);
    expect((await client.POST('/api/v1/webhooks', { body: { url: receiver.url('/events'), events: ['workflow.execution.completed'] } })).response.status).toBe(201);
    const agent = await client.POST('/api/v1/agents', { body: { name: 'Watched', type: 'assistant' } });
    expect((await api.post(`/api/v1/agents/${agent.data!.id}/chat`, { token: account.accessToken, json: { message: 'Hello' } })).status).toBe(200);
    const workflow = await createWorkflow(api, account, { name: 'Watched', nodes: [{ id: 'in', type: 'webhook', config: { path: '/w' } }], edges: [] });
    await activate(api, account, workflow.id);
    expect((await api.post(hookPath(workflow), { json: {} })).status).toBe(202);
    await receiver.waitFor(1, { timeoutMs: 30_000 });
    for (let read = 0; read < 20; read += 1) await api.get('/api/v1/agents', { token: account.accessToken });
  }, 240_000);

  afterAll(async () => {
    prometheus?.kill('SIGTERM');
    await platform?.stop();
    await receiver?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const query = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${promUrl}${path}`);
    const body = (await response.json()) as { status: string; data: T };
    expect(body.status).toBe('success');
    return body.data;
  };

  it('scrapes every replica, and evaluates every rule without an error', async () => {
    // The sentinel: every target has been scraped and is up.
    await expect
      .poll(
        async () => {
          const { activeTargets } = await query<{ activeTargets: { health: string }[] }>('/api/v1/targets').catch(() => ({ activeTargets: [] }));
          return activeTargets.length === platform.mesh.replicas.length && activeTargets.every((target) => target.health === 'up');
        },
        { timeout: 60_000, interval: 250 },
      )
      .toBe(true);
    await expect
      .poll(
        async () => {
          const { groups } = await query<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>('/api/v1/rules');
          const evaluated = groups.flatMap((group) => group.rules);
          return evaluated.length === rules.length && evaluated.every((rule) => rule.health === 'ok');
        },
        { timeout: 60_000, interval: 250 },
      )
      .toBe(true);
  });

  it('has every series a rule, a dashboard or a KEDA trigger reads, exported by the platform', async () => {
    const expressions = [...rules.map((rule) => rule.expr), ...dashboardQueries(), ...kedaQueries];
    const wanted = [...new Set(expressions.flatMap(seriesOf))].filter((name) => name !== 'up');
    expect(wanted).toEqual(expect.arrayContaining(['http_server_request_duration_count', 'outbox_publish_lag_bucket', 'webhook_delivery_attempts_total', 'workflow_executions_backlog', 'webhook_deliveries_backlog']));
    await expect
      .poll(async () => {
        const exported = new Set(await query<string[]>('/api/v1/label/__name__/values'));
        return wanted.filter((name) => !exported.has(name));
      }, { timeout: 15_000, interval: 250 })
      .toEqual([]);
  });
});
