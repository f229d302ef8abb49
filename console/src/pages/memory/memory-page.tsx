import { MEMORY_TYPES, type Agent, type ApiResponseError, type RequestBody } from '@agent-platform/client';
import { getRouteApi, Link, Navigate, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { call } from '../../api/call.js';
import { useTenantQuery } from '../../api/session-context.js';
import { Empty, QueryState } from '../../ui/feedback.js';
import { Field } from '../../ui/form.js';
import { EXACT_LINK } from '../../ui/links.js';
import { Page, Pager } from '../../ui/page.js';
import { useAgentChoices } from '../agents/agent-query.js';
import { DocumentsTab } from './documents-tab.js';
import { ItemPanel } from './item-panel.js';
import { ItemsTable, type ShownItem } from './items-table.js';
import { AddMemoryItem, BrowseFilters, SearchForm } from './memory-forms.js';
import { parseMetadataFilter, type MetadataFilter } from './memory-input.js';
import type { MemorySearch, MemoryView } from './memory-search.js';
import './memory.css';

const PER_PAGE = 20;
const route = getRouteApi('/app/memory');

/** The page's tabs, in order: Browse is the page without a view. */
const TABS: readonly { label: string; view: MemoryView | undefined }[] = [
  { label: 'Browse', view: undefined },
  { label: 'Search', view: 'search' },
  { label: 'Documents', view: 'documents' },
];

export function MemoryPage() {
  const search = route.useSearch();
  const [adding, setAdding] = useState(false);
  const agents = useAgentChoices();
  const agent = agents.data?.agents.find((candidate) => candidate.id === search.agent_id);
  return (
    <Page
      title="Memory"
      actions={
        agent ? (
          <button type="button" onClick={() => setAdding(true)} disabled={adding}>
            Add item
          </button>
        ) : null
      }
    >
      <QueryState query={agents} loadingLabel="Loading agents…">
        {(list) => {
          const first = list.agents[0];
          if (!first) {
            return (
              <Empty title="No agents yet">
                <p>
                  Memory belongs to an agent. <Link to="/agents">Create an agent</Link> first.
                </p>
              </Empty>
            );
          }
          // No agent chosen yet: the first one's memory, as if it had been picked.
          if (search.agent_id === undefined) return <Navigate to="/memory" search={{ agent_id: first.id }} replace />;
          return <AgentMemory agents={list.agents} agentId={search.agent_id} agent={agent} adding={adding} closeAdding={() => setAdding(false)} />;
        }}
      </QueryState>
    </Page>
  );
}

function AgentMemory({ agents, agentId, agent, adding, closeAdding }: { agents: Agent[]; agentId: string; agent: Agent | undefined; adding: boolean; closeAdding: () => void }) {
  const search = route.useSearch();
  const navigate = useNavigate();
  const searching = search.view === 'search';
  const list = useMemoryList(search, agentId, search.view === undefined);
  const found = useMemorySearch(search, agentId, searching);
  const memoryTypes = agent?.memory_types ?? [...MEMORY_TYPES];
  const shown: ShownItem[] | undefined = searching ? found.query.data?.results : list.data?.items;
  const filters = { agent_id: agentId, memory_type: search.memory_type, user_id: search.user_id };
  return (
    <>
      <Field label="Agent">
        <select
          className="memory-agent"
          value={agentId}
          onChange={(event) => {
            closeAdding();
            void navigate({ to: '/memory', search: { agent_id: event.target.value } });
          }}
        >
          {agent ? null : <option value={agentId}>Unknown agent {agentId}</option>}
          {agents.map((choice) => (
            <option key={choice.id} value={choice.id}>
              {choice.name}
            </option>
          ))}
        </select>
      </Field>
      {adding && agent ? <AddMemoryItem agent={agent} onDone={closeAdding} /> : null}
      <nav className="tabs" aria-label="Memory views">
        {TABS.map(({ label, view }) => (
          <Link
            key={label}
            to="/memory"
            // Browse and Search share their filters; the documents list has none.
            search={view === 'documents' ? { agent_id: agentId, view } : { ...filters, view }}
            className={search.view === view ? 'active' : undefined}
            aria-current={search.view === view ? 'page' : undefined}
            {...EXACT_LINK}
          >
            {label}
          </Link>
        ))}
      </nav>
      {search.view === 'documents' ? <DocumentsTab agentId={agentId} agent={agent} page={search.page ?? 1} /> : null}
      {searching ? (
        <SearchForm search={search} memoryTypes={memoryTypes} error={found.error} onRepeat={() => void found.query.refetch()} />
      ) : search.view === undefined ? (
        <BrowseFilters search={search} memoryTypes={memoryTypes} error={list.error} />
      ) : null}
      {search.item && search.view !== 'documents' ? <ItemPanel key={search.item} itemId={search.item} item={shown?.find((item) => item.id === search.item)} /> : null}
      {searching ? (
        <>
          {search.q === undefined ? (
            <p className="muted">Type what to look for: the best matches come first, each with its score from 0 to 1.</p>
          ) : found.error ? null : (
            <QueryState query={found.query} loadingLabel="Searching…">
              {(answer) =>
                answer.results.length === 0 ? (
                  <Empty title="Nothing found">
                    <p>No item matched this search. Try other words, a lower minimum score, or fewer filters.</p>
                  </Empty>
                ) : (
                  <ItemsTable items={answer.results} search={search} caption={`${answer.results.length} best matches, best first`} scored />
                )
              }
            </QueryState>
          )}
        </>
      ) : search.view === undefined ? (
        <>
          <QueryState query={list} loadingLabel="Loading memory…">
            {(page) =>
              page.items.length === 0 ? (
                search.memory_type || search.user_id || (search.page ?? 1) > 1 ? (
                  <Empty title="No items match these filters">
                    <p>
                      <Link to="/memory" search={{ agent_id: agentId }} {...EXACT_LINK}>
                        Show every item
                      </Link>
                    </p>
                  </Empty>
                ) : (
                  <Empty title="No memory yet">
                    <p>
                      An agent's memory fills as it works: after each chat turn the facts the user told it are extracted into semantic memory, documents (the Documents tab) are stored as
                      chunks, and items can be added here or with <code>POST /api/v1/memory</code>.
                    </p>
                  </Empty>
                )
              ) : (
                <>
                  <ItemsTable items={page.items} search={search} caption={`${page.total} ${page.total === 1 ? 'item' : 'items'}, newest first`} />
                  <Pager page={search.page ?? 1} perPage={PER_PAGE} total={page.total} onPage={(next) => void navigate({ to: '/memory', search: { ...search, page: next > 1 ? next : undefined, item: undefined } })} />
                </>
              )
            }
          </QueryState>
        </>
      ) : null}
    </>
  );
}

/** One page of the agent's items, as the browse tab's filters select them. */
function useMemoryList(search: MemorySearch, agentId: string, enabled: boolean) {
  const page = search.page ?? 1;
  return useTenantQuery(
    ['memory', 'list', agentId, search.memory_type, search.user_id, page],
    (client) =>
      call(
        client.GET('/api/v1/memory', {
          params: { query: { agent_id: agentId, page, per_page: PER_PAGE, ...(search.memory_type ? { memory_type: search.memory_type } : {}), ...(search.user_id ? { user_id: search.user_id } : {}) } },
        }),
      ),
    { enabled },
  );
}

type SearchBody = RequestBody<'/api/v1/memory/search', 'post'>;

/** The search the address describes; a metadata filter that is not a JSON object is refused before sending. */
function useMemorySearch(search: MemorySearch, agentId: string, enabled: boolean) {
  const request = searchRequest(search, agentId);
  const body = request && 'body' in request ? request.body : undefined;
  const query = useTenantQuery(
    ['memory', 'search', body],
    (client) => (body ? call(client.POST('/api/v1/memory/search', { body })) : Promise.reject(new Error('There is no search to run.'))),
    { enabled: enabled && body !== undefined },
  );
  return { query, error: request && 'error' in request ? request.error : query.error };
}

function searchRequest(search: MemorySearch, agentId: string): { body: SearchBody } | { error: ApiResponseError } | undefined {
  if (search.q === undefined) return undefined;
  let filter: MetadataFilter | undefined;
  if (search.filter !== undefined) {
    const parsed = parseMetadataFilter(search.filter);
    if (parsed.error) return { error: parsed.error };
    filter = parsed.value;
  }
  return {
    body: {
      agent_id: agentId,
      query: search.q,
      ...(search.memory_type ? { memory_type: search.memory_type } : {}),
      ...(search.user_id ? { user_id: search.user_id } : {}),
      ...(filter ? { filter } : {}),
      ...(search.top_k === undefined ? {} : { top_k: search.top_k }),
      ...(search.min_score === undefined ? {} : { min_score: search.min_score }),
    },
  };
}
