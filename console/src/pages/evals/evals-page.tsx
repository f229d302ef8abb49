import './evals.css';
import type { Eval } from '@agent-platform/client';
import { getRouteApi, Link, useNavigate } from '@tanstack/react-router';
import { definedOnly } from '../../routes/search-params.js';
import { PagedTable, type Column } from '../../ui/data-table.js';
import { Empty } from '../../ui/feedback.js';
import { Field } from '../../ui/form.js';
import { formatPercent } from '../../ui/format.js';
import { Page, Time } from '../../ui/page.js';
import { useEvalList } from './eval-query.js';
import { useEvalNames, type EvalNames } from './eval-names.js';
import { AgentAndVersion, NamedOptions } from './eval-parts.js';
import type { EvalsFilter } from './evals-search.js';

const PER_PAGE = 20;
const FILTERS = [
  { key: 'agent_id', label: 'Agent' },
  { key: 'dataset_id', label: 'Dataset' },
] as const;
const route = getRouteApi('/app/evals');

/** decisions §16.4: agents run on every item of a dataset and scored, newest first, filtered by agent and dataset. */
export function EvalsPage() {
  const { page = 1, ...filter } = route.useSearch();
  const navigate = useNavigate();
  const names = useEvalNames();
  const evals = useEvalList(filter, page, PER_PAGE, { live: true });
  // A changed filter starts again from the first page.
  const refilter = (change: EvalsFilter) => void navigate({ to: '/evals', search: definedOnly({ ...filter, ...change }) });
  const filtered = filter.agent_id !== undefined || filter.dataset_id !== undefined;
  return (
    <Page
      title="Evals"
      actions={
        <Link className="button" to="/evals/new" search={filter}>
          New eval
        </Link>
      }
    >
      <form className="evals-filter" aria-label="Filter evals" onSubmit={(event) => event.preventDefault()}>
        {FILTERS.map(({ key, label }) => (
          <Field key={key} label={label} field={key} error={evals.error}>
            <select value={filter[key] ?? ''} onChange={(event) => refilter({ [key]: event.target.value || undefined })}>
              <option value="">All</option>
              <NamedOptions chosen={filter[key]} choices={key === 'agent_id' ? names.agents.data?.agents : names.datasets.data?.items} />
            </select>
          </Field>
        ))}
      </form>
      <PagedTable
        query={evals}
        loadingLabel="Loading evals…"
        page={page}
        perPage={PER_PAGE}
        onPage={(next) => void navigate({ to: '/evals', search: { ...filter, page: next } })}
        label="Eval list"
        columns={evalColumns(names)}
        rowKey={(evaluation) => evaluation.id}
        empty={
          filtered ? (
            <Empty title="No evals match these filters" />
          ) : (
            <Empty title="No evals yet">
              <p>An eval runs an agent on every item of a dataset and scores each answer: whether it contains or matches what was expected, fits a JSON schema, or meets a rubric. Start one to see how an agent does.</p>
            </Empty>
          )
        }
      />
    </Page>
  );
}

function evalColumns(names: EvalNames): Column<Eval>[] {
  return [
    {
      header: 'Created',
      cell: (evaluation) => (
        <Link to="/evals/$evalId" params={{ evalId: evaluation.id }} search={{}}>
          <Time value={evaluation.created_at} />
        </Link>
      ),
    },
    { header: 'Agent', cell: (evaluation) => <AgentAndVersion evaluation={evaluation} names={names} /> },
    { header: 'Dataset', cell: (evaluation) => names.datasetName(evaluation.dataset_id) ?? <code>{evaluation.dataset_id}</code> },
    { header: 'Status', cell: (evaluation) => <span className={`badge badge-${evaluation.status}`}>{evaluation.status}</span> },
    { header: 'Progress', cell: (evaluation) => `${evaluation.progress.scored.toLocaleString()} / ${evaluation.item_count.toLocaleString()} scored` },
    {
      header: 'Pass rate',
      cell: (evaluation) => (
        <ul className="eval-pass-rates">
          {evaluation.summary.scorers.map((scorer) => (
            <li key={scorer.name}>
              {scorer.name}: {formatPercent(scorer.pass_rate)}
            </li>
          ))}
        </ul>
      ),
    },
  ];
}
