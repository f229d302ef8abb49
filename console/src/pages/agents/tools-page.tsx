import type { Tool } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Empty, ErrorNotice } from '../../ui/feedback.js';
import { Page, Time } from '../../ui/page.js';
import { TOOL_FORMS } from '../../generated/tool-forms.js';
import { ToolForm } from './tool-form.js';
import './agents.css';

const PER_PAGE = 20;
const route = getRouteApi('/app/tools');

type Editing = { tool: Tool | undefined; key: number } | undefined;

/** The tenant's tools: what agents may call (decisions §12). */
export function ToolsPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const [editing, setEditing] = useState<Editing>(undefined);
  const tools = useTenantQuery(['tools', page], (client) => call(client.GET('/api/v1/tools', { params: { query: { page, per_page: PER_PAGE } } })));
  // A new key per opening, so a form never keeps another tool's values.
  const open = (tool?: Tool) => setEditing((previous) => ({ tool, key: (previous?.key ?? 0) + 1 }));
  return (
    <Page
      title="Tools"
      actions={
        <button type="button" onClick={() => open()} disabled={editing !== undefined && editing.tool === undefined}>
          New tool
        </button>
      }
    >
      {editing ? <ToolForm key={editing.key} tool={editing.tool} onDone={() => setEditing(undefined)} /> : null}
      <PagedTable
        query={tools}
        loadingLabel="Loading tools…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/tools', search: { page: next } })}
        label="Tool list"
        columns={toolColumns({ onEdit: open, onDeleted: (tool) => editing?.tool?.id === tool.id && setEditing(undefined) })}
        rowKey={(tool) => tool.id}
        empty={
          <Empty title="No tools yet">
            <p>A tool lets an agent act: call an HTTP endpoint, run one of your workflows, or use the tools of an MCP server. Create one, then choose it in an agent's settings.</p>
          </Empty>
        }
      />
    </Page>
  );
}

function toolColumns({ onEdit, onDeleted }: { onEdit: (tool: Tool) => void; onDeleted: (tool: Tool) => void }): Column<Tool>[] {
  return [
    {
      header: 'Name',
      cell: (tool) => (
        <>
          <code>{tool.name}</code>
          {tool.description ? <div className="muted">{tool.description}</div> : null}
        </>
      ),
    },
    { header: 'Type', cell: (tool) => tool.type },
    { header: 'Calls', cell: (tool) => <ToolTarget tool={tool} /> },
    { header: 'Approval', cell: (tool) => (tool.requires_approval ? <span className="badge badge-awaiting_approval">required</span> : <span className="muted">no</span>) },
    { header: 'Changed', cell: (tool) => <Time value={tool.updated_at} /> },
    { header: 'Actions', cell: (tool) => <ToolActions tool={tool} onEdit={() => onEdit(tool)} onDeleted={() => onDeleted(tool)} /> },
  ];
}

/** Edit, refresh an MCP server's tools, delete once confirmed; what came of it is said beside them. */
function ToolActions({ tool, onEdit, onDeleted }: { tool: Tool; onEdit: () => void; onDeleted: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const path = { params: { path: { tool_id: tool.id } } };
  const remove = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/tools/{tool_id}', path)),
    onSuccess: async () => {
      onDeleted();
      // Agents that named it no longer do.
      await Promise.all([invalidate('tools'), invalidate('agents')]);
    },
  });
  const refresh = useMutation({
    mutationFn: () => call(client.POST('/api/v1/tools/{tool_id}/refresh', path)),
    onSuccess: () => invalidate('tools'),
  });
  return (
    <>
      <div className="row-actions">
        <button type="button" className="secondary" onClick={onEdit} aria-label={`Edit ${tool.name}`}>
          Edit
        </button>
        {TOOL_FORMS[tool.type].schemas === 'discovered' ? (
          <button type="button" className="secondary" onClick={() => refresh.mutate()} disabled={refresh.isPending} aria-label={`Refresh the tools of ${tool.name}`}>
            {refresh.isPending ? 'Refreshing…' : 'Refresh'}
          </button>
        ) : null}
        <ConfirmButton
          label="Delete"
          accessibleLabel={`Delete ${tool.name}`}
          question={`Delete ${tool.name}? Agents stop calling it.`}
          confirmLabel="Delete tool"
          pending={remove.isPending}
          pendingLabel="Deleting…"
          onConfirm={() => remove.mutate()}
        />
      </div>
      {refresh.isSuccess ? (
        <p className="notice notice-info" role="status">
          The server lists {refresh.data.discovered?.length ?? 0} tools.
        </p>
      ) : null}
      <ErrorNotice error={refresh.error} title="Could not refresh its tools" />
      <ErrorNotice error={remove.error} title="Could not delete the tool" />
    </>
  );
}

/** What a call of the tool reaches, as its type's controls say (a method, a URL, a workflow), and the tools its server lists. */
function ToolTarget({ tool }: { tool: Tool }) {
  const { fields, schemas } = TOOL_FORMS[tool.type];
  const valueOf = (field: (typeof fields)[number]) => {
    const value = tool.config[field.key];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  // Choices read first, as a request is written: "POST https://…".
  const choices = fields.filter((field) => field.input === 'choice').flatMap((field) => valueOf(field) ?? []);
  const addresses = fields.filter((field) => field.input === 'url' || field.input === 'workflow' || field.input === 'agent').flatMap((field) => valueOf(field) ?? []);
  const shown = [...choices.map((value) => <span key={value}>{value} </span>), ...addresses.map((value) => <code key={value}>{value}</code>)];
  const target = shown.length > 0 ? shown : '—';
  if (schemas !== 'discovered') return <span>{target}</span>;
  const discovered = tool.discovered ?? [];
  return (
    <div>
      {target}
      {discovered.length === 0 ? (
        <div className="muted">No tools discovered.</div>
      ) : (
        <ul className="discovered" aria-label={`Tools of ${tool.name}`}>
          {discovered.map((found) => (
            <li key={found.name}>
              <code>{found.name}</code>
              {found.description ? <span className="muted"> — {found.description}</span> : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
