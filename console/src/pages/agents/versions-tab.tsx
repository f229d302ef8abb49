import type { Agent, AgentVersion } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { DataTable } from '../../ui/data-table.js';
import { QueryState } from '../../ui/feedback.js';
import { Time } from '../../ui/page.js';
import { VersionsList } from '../../ui/versions-list.js';
import { allTools } from './all-tools.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/agents/$agentId');

/** What a version holds (decisions §16); name, type and description are not versioned. */
type Settings = Pick<AgentVersion, 'memory_types' | 'config' | 'tools'>;

/**
 * Every set of settings the agent has had: one viewed beside how it differs from the current
 * settings, any restorable as the next version.
 */
export function VersionsTab({ agent }: { agent: Agent }) {
  const { version: viewed, page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const client = useClient();
  const invalidate = useInvalidate();
  const versions = useTenantQuery(['agents', agent.id, 'versions', 'list', page], (api) =>
    call(api.GET('/api/v1/agents/{agent_id}/versions', { params: { path: { agent_id: agent.id }, query: { page, per_page: PER_PAGE } } })),
  );
  const restore = useMutation({
    mutationFn: (version: number) => call(client.POST('/api/v1/agents/{agent_id}/versions/{version}/restore', { params: { path: { agent_id: agent.id, version } } })),
    onSuccess: async (restored) => {
      await invalidate('agents');
      await navigate({ to: '/agents/$agentId', params: { agentId: agent.id }, search: { tab: 'versions', version: restored.version } });
    },
  });
  return (
    <section aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <p className="muted">
        Every change of the memory types, the model settings or the tools is a new version; name, type and description are not versioned. A turn runs to its end on the version it began with, and each run names
        its version. Restoring an old version saves its settings again as the newest.
      </p>
      <VersionsList
        query={versions}
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/agents/$agentId', params: { agentId: agent.id }, search: { tab: 'versions', page: next } })}
        current={agent.version}
        viewed={viewed}
        restore={restore}
        viewLink={(version) => (
          <Link to="/agents/$agentId" params={{ agentId: agent.id }} search={{ tab: 'versions', version, ...(page > 1 ? { page } : {}) }} aria-label={`View version ${version}`}>
            Version {version}
          </Link>
        )}
        restoreAction={(version) => (
          <ConfirmButton
            label="Restore"
            accessibleLabel={`Restore version ${version}`}
            question={`Make version ${version}'s settings the current ones, as version ${agent.version + 1}?`}
            confirmLabel={`Restore version ${version}`}
            className="secondary"
            pending={restore.isPending && restore.variables === version}
            pendingLabel="Restoring…"
            onConfirm={() => restore.mutate(version)}
          />
        )}
      />
      {viewed ? <VersionView agent={agent} version={viewed} /> : null}
    </section>
  );
}

function VersionView({ agent, version }: { agent: Agent; version: number }) {
  // A version never changes once made: read once, kept.
  const found = useTenantQuery(
    ['agents', agent.id, 'versions', version],
    (client) => call(client.GET('/api/v1/agents/{agent_id}/versions/{version}', { params: { path: { agent_id: agent.id, version } } })),
    { staleTime: Infinity },
  );
  const tools = useTenantQuery(['tools', 'all'], allTools);
  const toolName = (id: string) => tools.data?.find((tool) => tool.id === id)?.name ?? (tools.data ? `${id} (deleted)` : id);
  return (
    <section className="agent-version" aria-labelledby="version-title">
      <h3 id="version-title">Version {version}</h3>
      <QueryState query={found} loadingLabel={`Loading version ${version}…`}>
        {(item) => {
          const shown = settingRows(item, toolName);
          const current = settingRows(agent, toolName);
          const changed = [...new Set([...shown.keys(), ...current.keys()])].filter((setting) => shown.get(setting) !== current.get(setting));
          return (
            <>
              <p className="muted">
                Made <Time value={item.created_at} />
                {item.created_by ? (
                  <>
                    {' '}
                    by <code>{item.created_by}</code>
                  </>
                ) : null}
                .
              </p>
              <dl className="facts">
                {[...shown].map(([setting, value]) => (
                  <SettingFact key={setting} setting={setting} value={value} />
                ))}
              </dl>
              <h4>Compared with the current settings (version {agent.version})</h4>
              {changed.length === 0 ? (
                <p className="muted">{version === agent.version ? 'This is the current version.' : 'The same as the current settings.'}</p>
              ) : (
                <DataTable
                  label={`Differences between version ${version} and the current settings`}
                  className="version-diff"
                  columns={[
                    { header: 'Setting', cell: (setting: string) => <code>{setting}</code> },
                    { header: `Version ${version}`, cell: (setting: string) => <SettingValue value={shown.get(setting)} /> },
                    { header: `Current (version ${agent.version})`, cell: (setting: string) => <SettingValue value={current.get(setting)} /> },
                  ]}
                  rows={changed}
                  rowKey={(setting) => setting}
                />
              )}
            </>
          );
        }}
      </QueryState>
    </section>
  );
}

/**
 * The settings as one line of text each, named by the API's field (`config.temperature`), so two
 * versions compare setting by setting; a setting left to the default has no line.
 */
function settingRows(settings: Settings, toolName: (id: string) => string): Map<string, string> {
  const rows = new Map<string, string>([['memory_types', settings.memory_types.join(', ')]]);
  for (const [key, value] of Object.entries(settings.config).toSorted(([a], [b]) => a.localeCompare(b))) rows.set(`config.${key}`, typeof value === 'string' ? value : JSON.stringify(value));
  rows.set('tools', settings.tools.map(toolName).join(', '));
  return rows;
}

function SettingFact({ setting, value }: { setting: string; value: string }) {
  return (
    <>
      <dt>
        <code>{setting}</code>
      </dt>
      <dd>
        <SettingValue value={value} />
      </dd>
    </>
  );
}

function SettingValue({ value }: { value: string | undefined }) {
  if (value === undefined) return <span className="muted">default</span>;
  if (value === '') return <span className="muted">none</span>;
  return <span className="setting-value">{value}</span>;
}
