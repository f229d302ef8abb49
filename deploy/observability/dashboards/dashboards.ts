import { DashboardBuilder, RowBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';

/**
 * The mesh's Grafana dashboards as code (decisions §18.5): an overview and one per part, built with
 * the Foundation SDK. `pnpm dashboards` writes them beside this file as JSON for provisioning;
 * test/integration/observability.test.ts checks the JSON is what this builds and that every query
 * reads series the platform exports. Jobs are named after the parts, as the alert rules expect.
 */

interface Graph {
  title: string;
  unit: string;
  /** PromQL, by legend. */
  queries: Record<string, string>;
}

const graph = (title: string, unit: string, queries: Record<string, string>): Graph => ({ title, unit, queries });

/** What every process shows: its runtime and its database pool. */
const runtime = (job: string): Graph[] => [
  graph('Event loop delay p99', 's', { '{{instance}}': `max by (instance) (nodejs_eventloop_delay_p99{job="${job}"})` }),
  graph('Heap used', 'bytes', { '{{instance}}': `sum by (instance) (v8js_memory_heap_used{job="${job}"})` }),
  graph('GC time', 's', { '{{instance}}': `sum by (instance) (rate(v8js_gc_duration_sum{job="${job}"}[$__rate_interval]))` }),
];

const databasePool = (job: string): Graph =>
  graph('Requests waiting for a database connection', 'short', { '{{instance}}': `sum by (instance) (db_client_connection_pending_requests{job="${job}"})` });

/** A gRPC service's calls: rate by method, errors, p99. */
const grpcService = (job: string): Graph[] => [
  graph('Calls by method', 'reqps', { '{{rpc_method}}': `sum by (rpc_method) (rate(rpc_server_call_duration_count{job="${job}"}[$__rate_interval]))` }),
  graph('Failed calls by status', 'reqps', { '{{rpc_method}} {{rpc_grpc_status_code}}': `sum by (rpc_method, rpc_grpc_status_code) (rate(rpc_server_call_duration_count{job="${job}",rpc_grpc_status_code!="0"}[$__rate_interval]))` }),
  graph('p99 by method', 's', { '{{rpc_method}}': `histogram_quantile(0.99, sum by (rpc_method, le) (rate(rpc_server_call_duration_bucket{job="${job}"}[$__rate_interval])))` }),
];

const outbox = (job: string): Graph => graph('Outbox publish lag p99', 's', { lag: `histogram_quantile(0.99, sum by (le) (rate(outbox_publish_lag_bucket{job="${job}"}[$__rate_interval])))` });

const backlog = (name: string, job: string): Graph =>
  graph(`Backlog: ${name.replaceAll('_', ' ')}`, 'short', { due: `max(${name}{job="${job}"})`, 'oldest (s)': `max(${name}_age{job="${job}"})` });

/** One table: each dashboard, its rows of graphs. */
export const DASHBOARDS: Record<string, { title: string; rows: Record<string, Graph[]> }> = {
  overview: {
    title: 'Agent platform: overview',
    rows: {
      Objectives: [
        graph('API requests answered 5xx (objective: under 0.1 %)', 'percentunit', { '5 m': 'slo:api_errors:ratio_rate5m', '1 h': 'slo:api_errors:ratio_rate1h' }),
        graph('Authenticated reads over 250 ms (objective: under 1 %)', 'percentunit', { '5 m': 'slo:read_latency:slow_ratio_rate5m', '1 h': 'slo:read_latency:slow_ratio_rate1h' }),
      ],
      Traffic: [
        graph('Requests by status', 'reqps', { '{{http_response_status_code}}': 'sum by (http_response_status_code) (rate(http_server_request_duration_count{job="gateway"}[$__rate_interval]))' }),
        graph('gRPC calls by part', 'reqps', { '{{job}}': 'sum by (job) (rate(rpc_server_call_duration_count[$__rate_interval]))' }),
        graph('Replicas up', 'short', { '{{job}}': 'sum by (job) (up)' }),
      ],
      Work: [
        backlog('workflow_executions_backlog', 'workflow-runner'),
        backlog('webhook_deliveries_backlog', 'webhook-dispatcher'),
        graph('Outbox publish lag p99 by part', 's', { '{{job}}': 'job:outbox_publish_lag:p99_rate5m' }),
      ],
    },
  },
  gateway: {
    title: 'Agent platform: gateway',
    rows: {
      Requests: [
        graph('Requests by route', 'reqps', { '{{http_request_method}} {{http_route}}': 'sum by (http_request_method, http_route) (rate(http_server_request_duration_count{job="gateway"}[$__rate_interval]))' }),
        graph('5xx by route', 'reqps', { '{{http_route}} {{http_response_status_code}}': 'sum by (http_route, http_response_status_code) (rate(http_server_request_duration_count{job="gateway",http_response_status_code=~"5.."}[$__rate_interval]))' }),
        graph('p99 by route', 's', { '{{http_route}}': 'job_route:http_server_request_duration:p99_rate5m{job="gateway"}' }),
      ],
      Runtime: runtime('gateway'),
    },
  },
  identity: { title: 'Agent platform: identity', rows: { Calls: grpcService('identity'), Storage: [databasePool('identity'), outbox('identity')], Runtime: runtime('identity') } },
  'agent-memory': {
    title: 'Agent platform: agent-memory',
    rows: {
      Calls: grpcService('agent-memory'),
      Models: [
        graph('Model and embedding calls p99', 's', { '{{gen_ai_operation_name}}': 'histogram_quantile(0.99, sum by (gen_ai_operation_name, le) (rate(gen_ai_client_operation_duration_bucket{job="agent-memory"}[$__rate_interval])))' }),
        graph('Embedded vector index', 'short', { vectors: 'sum(agent_memory_vector_index_vectors{job="agent-memory"})', 'waiting for a graph': 'sum(agent_memory_vector_index_pending{job="agent-memory"})' }),
      ],
      Storage: [databasePool('agent-memory'), outbox('agent-memory')],
      Runtime: runtime('agent-memory'),
    },
  },
  'workflow-runner': {
    title: 'Agent platform: workflow-runner',
    rows: {
      Calls: grpcService('workflow-runner'),
      Executions: [
        backlog('workflow_executions_backlog', 'workflow-runner'),
        graph('Executions finished by status', 'ops', { '{{workflow_execution_status}}': 'sum by (workflow_execution_status) (rate(workflow_execution_duration_count{job="workflow-runner"}[$__rate_interval]))' }),
        graph('Node p99 by type', 's', { '{{workflow_node_type}}': 'histogram_quantile(0.99, sum by (workflow_node_type, le) (rate(workflow_node_duration_bucket{job="workflow-runner"}[$__rate_interval])))' }),
      ],
      Storage: [databasePool('workflow-runner'), outbox('workflow-runner')],
      Runtime: runtime('workflow-runner'),
    },
  },
  'webhook-dispatcher': {
    title: 'Agent platform: webhook-dispatcher',
    rows: {
      Calls: grpcService('webhook-dispatcher'),
      Deliveries: [
        backlog('webhook_deliveries_backlog', 'webhook-dispatcher'),
        graph('Attempts by outcome', 'ops', { '{{webhook_delivery_outcome}}': 'sum by (webhook_delivery_outcome) (rate(webhook_delivery_attempts_total{job="webhook-dispatcher"}[$__rate_interval]))' }),
        graph('Attempt p99', 's', { p99: 'histogram_quantile(0.99, sum by (le) (rate(webhook_delivery_attempt_duration_bucket{job="webhook-dispatcher"}[$__rate_interval])))' }),
      ],
      Storage: [databasePool('webhook-dispatcher')],
      Runtime: runtime('webhook-dispatcher'),
    },
  },
};

/** Every dashboard, as Grafana's JSON model, by file name. */
export function buildDashboards(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(DASHBOARDS).map(([name, { title, rows }]) => {
      const dashboard = new DashboardBuilder(title).uid(`agent-platform-${name}`).tags(['agent-platform']).refresh('30s').time({ from: 'now-3h', to: 'now' });
      for (const [row, graphs] of Object.entries(rows)) {
        dashboard.withRow(new RowBuilder(row));
        for (const { title: panelTitle, unit, queries } of graphs) {
          const panel = new PanelBuilder().title(panelTitle).unit(unit).min(0).height(8).span(24 / graphs.length);
          for (const [legend, expr] of Object.entries(queries)) panel.withTarget(new DataqueryBuilder().expr(expr).legendFormat(legend));
          dashboard.withPanel(panel);
        }
      }
      return [`${name}.json`, dashboard.build()];
    }),
  );
}

/** Every PromQL expression of every dashboard. */
export function dashboardQueries(): string[] {
  return Object.values(DASHBOARDS).flatMap(({ rows }) => Object.values(rows).flatMap((graphs) => graphs.flatMap((one) => Object.values(one.queries))));
}
