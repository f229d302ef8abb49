import type { Agent, RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import type { FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Empty, ErrorNotice } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions, useCreateForm } from '../../ui/form-actions.js';
import { Page, Time } from '../../ui/page.js';
import { checkedValues } from './checked-values.js';
import { MemoryTypeChoices } from './memory-type-choices.js';
import { DEFAULT_MEMORY_TYPES } from './memory-types.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/agents');

export function AgentsPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  // The form's success opens the new agent's page: nothing made is kept here.
  const creating = useCreateForm();
  const agents = useTenantQuery(['agents', page], async (client) => {
    const list = await call(client.GET('/api/v1/agents', { params: { query: { page, per_page: PER_PAGE } } }));
    // As the other paged lists answer: the table reads `items`.
    return { items: list.agents, total: list.total };
  });
  return (
    <Page
      title="Agents"
      actions={
        <button type="button" onClick={creating.start} disabled={creating.open}>
          New agent
        </button>
      }
    >
      {creating.open ? <CreateAgent onDone={creating.cancel} /> : null}
      <PagedTable
        query={agents}
        loadingLabel="Loading agents…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/agents', search: { page: next } })}
        label="Agent list"
        columns={AGENT_COLUMNS}
        rowKey={(agent) => agent.id}
        empty={
          <Empty title="No agents yet">
            <p>An agent answers chat turns with its model, its tools and the memory it keeps. Create one to begin.</p>
          </Empty>
        }
      />
    </Page>
  );
}

const AGENT_COLUMNS: Column<Agent>[] = [
  {
    header: 'Name',
    cell: (agent) => (
      <Link to="/agents/$agentId" params={{ agentId: agent.id }}>
        {agent.name}
      </Link>
    ),
  },
  { header: 'Type', cell: (agent) => agent.type },
  { header: 'Memory', cell: (agent) => agent.memory_types.join(', ') },
  { header: 'Status', cell: (agent) => <span className={`badge badge-${agent.status}`}>{agent.status}</span> },
  { header: 'Created', cell: (agent) => <Time value={agent.created_at} /> },
];

type NewAgent = RequestBody<'/api/v1/agents', 'post'>;

function CreateAgent({ onDone }: { onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const mutation = useMutation({
    mutationFn: (agent: NewAgent) => call(client.POST('/api/v1/agents', { body: agent })),
    onSuccess: async (agent) => {
      await invalidate('agents');
      onDone();
      await navigate({ to: '/agents/$agentId', params: { agentId: agent.id } });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const { name = '', type = '', description, system_prompt, model } = formValues(form);
    mutation.mutate({
      name,
      type,
      ...(description ? { description } : {}),
      memory_types: checkedValues(form, 'memory_types'),
      config: { ...(system_prompt ? { system_prompt } : {}), ...(model ? { model } : {}) },
    });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="new-agent-title" noValidate>
      <h2 id="new-agent-title">New agent</h2>
      <ErrorNotice error={mutation.error} title="Could not create the agent" />
      <Field label="Name" field="name" error={mutation.error}>
        <input name="name" required autoFocus />
      </Field>
      <Field label="Type" field="type" error={mutation.error} hint="a-z, 0-9, _ and -, e.g. support">
        <input name="type" required defaultValue="assistant" />
      </Field>
      <Field label="Description" field="description" error={mutation.error}>
        <textarea name="description" rows={2} />
      </Field>
      <MemoryTypeChoices error={mutation.error} checked={DEFAULT_MEMORY_TYPES} />
      <Field label="System prompt" field="config.system_prompt" error={mutation.error}>
        <textarea name="system_prompt" rows={3} />
      </Field>
      <Field label="Model" field="config.model" error={mutation.error} hint="Leave empty for the platform's default.">
        <input name="model" />
      </Field>
      <FormActions submitLabel="Create agent" pendingLabel="Creating…" pending={mutation.isPending} onCancel={onDone} />
    </form>
  );
}
