import './evals.css';
import type { RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { Empty, ErrorNotice, Loading } from '../../ui/feedback.js';
import { Field } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { Page } from '../../ui/page.js';
import { useEvalNames } from './eval-names.js';
import { NamedOptions } from './eval-parts.js';
import type { EvalsFilter } from './evals-search.js';
import { newScorerDraft, SCORER_KINDS, type ScorerDraft } from './scorer-kinds.js';
import { ScorerRows } from './scorer-rows.js';

type NewEval = RequestBody<'/api/v1/evals', 'post'>;
const route = getRouteApi('/app/evals/new');
/** The versions offered: one page of the most the API gives, newest first. */
const VERSION_CHOICES = 100;

/** The form of a new eval: which agent (and version) on which dataset, how many runs at once, and how each answer is scored. */
export function NewEvalPage() {
  const chosen = route.useSearch();
  const names = useEvalNames();
  const agents = names.agents.data?.agents;
  const datasets = names.datasets.data?.items;
  return (
    <Page title="New eval">
      <p className="breadcrumbs">
        <Link to="/evals" search={chosen}>
          Evals
        </Link>
      </p>
      <ErrorNotice error={names.agents.error ?? names.datasets.error} title="Could not load the agents and datasets to choose from" />
      {!agents || !datasets ? (
        names.agents.error || names.datasets.error ? null : <Loading label="Loading agents and datasets…" />
      ) : agents.length === 0 ? (
        <Empty title="No agents yet">
          <p>
            An eval runs an agent: <Link to="/agents">create one</Link> first.
          </p>
        </Empty>
      ) : datasets.length === 0 ? (
        <Empty title="No datasets yet">
          <p>
            An eval runs the agent on each item of a dataset: <Link to="/datasets">create one</Link> and add items first.
          </p>
        </Empty>
      ) : (
        <NewEvalForm chosen={chosen} agents={agents} datasets={datasets} />
      )}
    </Page>
  );
}

function NewEvalForm({ chosen, agents, datasets }: { chosen: EvalsFilter; agents: { id: string; name: string; version: number }[]; datasets: { id: string; name: string; item_count: number }[] }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const [datasetId, setDatasetId] = useState(chosen.dataset_id ?? datasets[0]!.id);
  const [agentId, setAgentId] = useState(chosen.agent_id ?? agents[0]!.id);
  const [version, setVersion] = useState('');
  const [concurrency, setConcurrency] = useState('');
  const [drafts, setDrafts] = useState<ScorerDraft[]>(() => [newScorerDraft(0)]);
  const agent = agents.find((candidate) => candidate.id === agentId);
  const versions = useTenantQuery(['agents', agentId, 'versions', 'choices'], (api) =>
    call(api.GET('/api/v1/agents/{agent_id}/versions', { params: { path: { agent_id: agentId }, query: { per_page: VERSION_CHOICES } } })),
  );
  const mutation = useMutation({
    // The scorers are read here, so a schema that is not JSON is this mutation's error, on its field.
    mutationFn: () => call(client.POST('/api/v1/evals', { body: newEval() })),
    onSuccess: async (created) => {
      await invalidate('evals');
      await navigate({ to: '/evals/$evalId', params: { evalId: created.id }, search: {} });
    },
  });
  const newEval = (): NewEval => ({
    dataset_id: datasetId,
    agent_id: agentId,
    ...(version === '' ? {} : { agent_version: Number(version) }),
    ...(concurrency === '' ? {} : { concurrency: Number(concurrency) }),
    scorers: drafts.map((draft, index) => SCORER_KINDS[draft.type].scorer(draft, `scorers[${index}]`)),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    mutation.mutate();
  };
  return (
    <form className="card new-eval" onSubmit={submit} aria-label="New eval" noValidate>
      <ErrorNotice error={mutation.error} title="Could not start the eval" />
      <Field label="Dataset" field="dataset_id" error={mutation.error} hint="Its items are copied as they are now: changing the dataset later leaves the eval as it was.">
        <select value={datasetId} onChange={(event) => setDatasetId(event.target.value)}>
          <NamedOptions chosen={datasetId} choices={datasets.map((dataset) => ({ id: dataset.id, name: `${dataset.name} (${dataset.item_count === 1 ? '1 item' : `${dataset.item_count.toLocaleString()} items`})` }))} />
        </select>
      </Field>
      <Field label="Agent" field="agent_id" error={mutation.error} hint="Each item is a run of it, charged as a chat turn.">
        <select
          value={agentId}
          onChange={(event) => {
            setAgentId(event.target.value);
            // Another agent's versions are others.
            setVersion('');
          }}
        >
          <NamedOptions chosen={agentId} choices={agents} />
        </select>
      </Field>
      <Field label="Version" field="agent_version" error={mutation.error} hint="The settings each run uses.">
        <select value={version} onChange={(event) => setVersion(event.target.value)}>
          <option value="">{agent ? `Current (version ${agent.version})` : 'Current'}</option>
          {versions.data?.items.map((item) => (
            <option key={item.version} value={String(item.version)}>
              Version {item.version}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Concurrency" field="concurrency" error={mutation.error} hint="How many of its runs at once, 1 to 16; empty: 4.">
        <input type="number" min={1} max={16} step={1} inputMode="numeric" value={concurrency} onChange={(event) => setConcurrency(event.target.value)} />
      </Field>
      <ScorerRows
        drafts={drafts}
        error={mutation.error}
        onChange={(next) => {
          // The API's messages name scorers by place: once a row is added or removed they name others.
          if (next.length !== drafts.length) mutation.reset();
          setDrafts(next);
        }}
      />
      <FormActions submitLabel="Start eval" pendingLabel="Starting…" pending={mutation.isPending} onCancel={() => void navigate({ to: '/evals', search: chosen })} />
    </form>
  );
}
