import type { RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { Page, Pager, Time } from '../../ui/page.js';
import { DEFAULT_MEMORY_TYPES, MEMORY_TYPES } from './memory-types.js';

const PER_PAGE = 20;
const route = getRouteApi('/app/agents');

export function AgentsPage() {
  const { page = 1 } = route.useSearch();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const agents = useTenantQuery(['agents', page], (client) => call(client.GET('/api/v1/agents', { params: { query: { page, per_page: PER_PAGE } } })));
  return (
    <Page
      title="Agents"
      actions={
        <button type="button" onClick={() => setCreating(true)} disabled={creating}>
          New agent
        </button>
      }
    >
      {creating ? <CreateAgent onDone={() => setCreating(false)} /> : null}
      <QueryState query={agents} loadingLabel="Loading agents…">
        {(list) =>
          list.agents.length === 0 ? (
            <Empty title="No agents yet">
              <p>An agent answers chat turns with its model, its tools and the memory it keeps. Create one to begin.</p>
            </Empty>
          ) : (
            <>
              <div className="table-scroll">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Type</th>
                      <th scope="col">Memory</th>
                      <th scope="col">Status</th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {list.agents.map((agent) => (
                      <tr key={agent.id}>
                        <td>
                          <Link to="/agents/$agentId" params={{ agentId: agent.id }}>
                            {agent.name}
                          </Link>
                        </td>
                        <td>{agent.type}</td>
                        <td>{agent.memory_types.join(', ')}</td>
                        <td>
                          <span className={`badge badge-${agent.status}`}>{agent.status}</span>
                        </td>
                        <td>
                          <Time value={agent.created_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager page={page} perPage={PER_PAGE} total={list.total} onPage={(next) => void navigate({ to: '/agents', search: { page: next } })} />
            </>
          )
        }
      </QueryState>
    </Page>
  );
}

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
    const memoryTypes = new FormData(form).getAll('memory_types').filter((value): value is string => typeof value === 'string');
    mutation.mutate({
      name,
      type,
      ...(description ? { description } : {}),
      memory_types: memoryTypes,
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
      <fieldset>
        <legend>Memory it keeps</legend>
        {MEMORY_TYPES.map((memoryType) => (
          <label key={memoryType} className="checkbox">
            <input type="checkbox" name="memory_types" value={memoryType} defaultChecked={DEFAULT_MEMORY_TYPES.includes(memoryType)} /> {memoryType}
          </label>
        ))}
      </fieldset>
      <Field label="System prompt" field="config.system_prompt" error={mutation.error}>
        <textarea name="system_prompt" rows={3} />
      </Field>
      <Field label="Model" field="config.model" error={mutation.error} hint="Leave empty for the platform's default.">
        <input name="model" />
      </Field>
      <div className="form-actions">
        <button type="submit" disabled={mutation.isPending}>
          {mutation.isPending ? 'Creating…' : 'Create agent'}
        </button>
        <button type="button" className="secondary" onClick={onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}
