import './runs.css';
import { RUN_STATUSES, RUN_TRIGGERS, type Agent, type Run } from '@agent-platform/client';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';
import { definedOnly } from '../../routes/search-params.js';
import { CursorPager, type CursorPosition } from '../../ui/cursor-pager.js';
import { DataTable, type Column } from '../../ui/data-table.js';
import { Empty, QueryState } from '../../ui/feedback.js';
import { Field } from '../../ui/form.js';
import { formatDuration } from '../../ui/format.js';
import { Options } from '../../ui/options.js';
import { Time } from '../../ui/page.js';
import { RunStats, useRunStats } from './run-stats.js';
import { runsFilter, type RunsFilter } from './runs-search.js';

const LIMIT = 20;
/** The API counts matching runs up to this many; a total of it means at least that many. */
const TOTAL_CAP = 10_000;
const route = getRouteApi('/app/agents/$agentId');
const HOUR_MS = 3_600_000;
const QUICK_RANGES = [
  { label: 'Last hour', ms: HOUR_MS },
  { label: 'Last 24 hours', ms: 24 * HOUR_MS },
  { label: 'Last 7 days', ms: 7 * 24 * HOUR_MS },
] as const;

/**
 * An agent's runs, newest first, a page at a time by cursor, with its stats above them. The
 * filters and the page are in the URL, so a reload or a link shows the same runs.
 */
export function RunsTab({ agent }: { agent: Agent }) {
  const search = route.useSearch();
  const { cursor, back = [] } = search;
  const filter = runsFilter(search);
  const navigate = useNavigate();
  const runs = useTenantQuery(['runs', 'list', agent.id, filter, cursor ?? ''], (client) =>
    call(client.GET('/api/v1/agents/{agent_id}/runs', { params: { path: { agent_id: agent.id }, query: { limit: LIMIT, ...filter, ...(cursor ? { cursor } : {}) } } })),
  );
  const stats = useRunStats(agent.id, filter.since, filter.until);
  const go = (next: RunsFilter & CursorPosition) => void navigate({ to: '/agents/$agentId', params: { agentId: agent.id }, search: { tab: 'runs', ...definedOnly(next) } });
  // A changed filter starts again from the newest page.
  const refilter = (change: RunsFilter) => go({ ...filter, ...change });
  const filtered = Object.keys(filter).length > 0;
  return (
    <section aria-labelledby="runs-title">
      <h2 id="runs-title">Runs</h2>
      <RunStats stats={stats} />
      {/* Either answer's message on a filter (a range the stats refuse) stands beside its control. */}
      <RunsFilterForm filter={filter} error={runs.error ?? stats.error} onChange={refilter} onClear={() => go({})} />
      <QueryState query={runs} loadingLabel="Loading runs…">
        {(list) => (
          <>
            <p className="muted" role="status">
              {list.total >= TOTAL_CAP ? `${TOTAL_CAP.toLocaleString()} or more runs` : list.total === 1 ? '1 run' : `${list.total.toLocaleString()} runs`}
              {filtered ? (list.total === 1 ? ' matches these filters' : ' match these filters') : ''}
            </p>
            <DataTable
              label="Run list"
              columns={RUN_COLUMNS}
              rows={list.items}
              rowKey={(run) => run.id}
              empty={
                <Empty title={filtered ? 'No runs match these filters' : 'No runs yet'}>
                  <p>{filtered ? 'Change the filters, or clear them.' : 'Every turn of the agent is a run: chat with it in the Playground, or call it through the API.'}</p>
                </Empty>
              }
            />
            <CursorPager cursor={cursor} back={back} nextCursor={list.next_cursor} onPage={(position) => go({ ...filter, ...position })} />
          </>
        )}
      </QueryState>
    </section>
  );
}

/** How much of a run's message the list shows; the run's page has all of it. */
const INPUT_SHOWN = 80;

const RUN_COLUMNS: Column<Run>[] = [
  {
    header: 'Run',
    cell: (run) => (
      <Link to="/runs/$runId" params={{ runId: run.id }} title={run.id}>
        {run.input.length > INPUT_SHOWN ? `${run.input.slice(0, INPUT_SHOWN)}…` : run.input}
      </Link>
    ),
  },
  { header: 'Status', cell: (run) => <span className={`badge badge-${run.status}`}>{run.status}</span> },
  { header: 'Trigger', cell: (run) => run.trigger },
  { header: 'Started', cell: (run) => <Time value={run.started_at} /> },
  { header: 'Duration', cell: (run) => formatDuration(run.duration_ms) },
  { header: 'Tokens', cell: (run) => run.usage.total_tokens.toLocaleString() },
  { header: 'Credits', cell: (run) => run.credits.toLocaleString() },
  { header: 'Version', cell: (run) => run.agent_version },
];

/** An instant as a datetime-local control shows it: the reader's local time, to the minute. */
function localInput(instant: string | undefined): string {
  if (!instant) return '';
  const time = new Date(instant);
  return new Date(time.getTime() - time.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

/** A datetime-local control's value (local time) as the API's instant; empty is none. */
function instantOf(local: string): string | undefined {
  const time = local === '' ? Number.NaN : new Date(local).getTime();
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}

function RunsFilterForm({ filter, error, onChange, onClear }: { filter: RunsFilter; error: unknown; onChange: (change: RunsFilter) => void; onClear: () => void }) {
  return (
    <form className="runs-filter" aria-label="Filter runs" onSubmit={(event) => event.preventDefault()}>
      <Field label="Status" field="status" error={error}>
        <select value={filter.status ?? ''} onChange={(event) => onChange({ status: RUN_STATUSES.find((known) => known === event.target.value) })}>
          <Options values={RUN_STATUSES} blank="All" />
        </select>
      </Field>
      <Field label="Trigger" field="trigger" error={error}>
        <select value={filter.trigger ?? ''} onChange={(event) => onChange({ trigger: RUN_TRIGGERS.find((known) => known === event.target.value) })}>
          <Options values={RUN_TRIGGERS} blank="All" />
        </select>
      </Field>
      <Field label="Started from" field="since" error={error}>
        <input type="datetime-local" value={localInput(filter.since)} onChange={(event) => onChange({ since: instantOf(event.target.value) })} />
      </Field>
      <Field label="Started before" field="until" error={error}>
        <input type="datetime-local" value={localInput(filter.until)} onChange={(event) => onChange({ until: instantOf(event.target.value) })} />
      </Field>
      <div className="runs-filter-actions">
        {QUICK_RANGES.map((range) => (
          <button key={range.label} type="button" className="secondary" onClick={() => onChange({ since: new Date(Date.now() - range.ms).toISOString(), until: undefined })}>
            {range.label}
          </button>
        ))}
        <button type="button" className="secondary" onClick={onClear} disabled={Object.keys(filter).length === 0}>
          Clear filters
        </button>
      </div>
    </form>
  );
}
