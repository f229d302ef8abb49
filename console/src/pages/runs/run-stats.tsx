import type { AgentRunStats } from '@agent-platform/client';
import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';
import { QueryState } from '../../ui/feedback.js';
import { Figures } from '../../ui/figures.js';
import { formatDuration, formatPercent } from '../../ui/format.js';
import { Time } from '../../ui/page.js';

/**
 * The agent's runs summed over the list's time range (the stats take no other filter): without
 * one, the API's default, every run still kept (RUN_RETENTION_DAYS).
 */
export function useRunStats(agentId: string, since: string | undefined, until: string | undefined) {
  const range = { ...(since ? { since } : {}), ...(until ? { until } : {}) };
  return useTenantQuery(['runs', 'stats', agentId, range], (client) => call(client.GET('/api/v1/agents/{agent_id}/stats', { params: { path: { agent_id: agentId }, query: range } })));
}

export function RunStats({ stats }: { stats: ReturnType<typeof useRunStats> }) {
  return (
    <section className="run-stats card" aria-labelledby="run-stats-title">
      <h3 id="run-stats-title">Stats</h3>
      <QueryState query={stats} loadingLabel="Loading the stats…">
        {(found) => (
          <>
            <p className="muted">
              Runs started from <Time value={found.since} /> to <Time value={found.until} />, whatever their status or trigger.
            </p>
            <Figures className="run-stats-figures" figures={figures(found)} />
          </>
        )}
      </QueryState>
    </section>
  );
}

function figures(stats: AgentRunStats): [string, string][] {
  const mean = stats.feedback_mean;
  return [
    ['Runs', stats.runs.toLocaleString()],
    ['Failure rate', `${formatPercent(stats.failure_rate)} (${stats.failed.toLocaleString()} failed)`],
    ['p50 duration', formatDuration(stats.p50_duration_ms)],
    ['p95 duration', formatDuration(stats.p95_duration_ms)],
    ['Tokens', stats.usage.total_tokens.toLocaleString()],
    ['Credits', stats.credits.toLocaleString()],
    // -1 (every score bad) to 1 (every score good).
    ['Feedback', mean === null ? 'none yet' : `${mean > 0 ? '+' : ''}${mean.toFixed(2)} from ${stats.feedback_count === 1 ? '1 score' : `${stats.feedback_count.toLocaleString()} scores`}`],
  ];
}
