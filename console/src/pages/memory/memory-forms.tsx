import type { Agent, RequestBody } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { call } from '../../api/call.js';
import { useClient, useInvalidate } from '../../api/session-context.js';
import { ErrorNotice } from '../../ui/feedback.js';
import { checkedValue, localValidationError, parseOptionalJsonObject } from '../../api/local-errors.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { Options } from '../../ui/options.js';
import { JsonField } from '../../ui/json-field.js';
import { EXACT_LINK } from '../../ui/links.js';
import { BLANK_CONTENT, METADATA_EXAMPLE, parseMetadataFilter } from './memory-input.js';
import { isMemoryType, type MemorySearch } from './memory-search.js';

/** The browse tab's filters: a memory type and an end user, applied to the address. */
export function BrowseFilters({ search, memoryTypes, error }: { search: MemorySearch; memoryTypes: readonly string[]; error: unknown }) {
  const navigate = useNavigate();
  const apply = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { memory_type, user_id = '' } = formValues(event.currentTarget);
    void navigate({ to: '/memory', search: { agent_id: search.agent_id, memory_type: isMemoryType(memory_type) ? memory_type : undefined, user_id: user_id === '' ? undefined : user_id } });
  };
  return (
    // Keyed by the filters, so its fields show the address's again after a link or the back button.
    <form key={`${search.memory_type}|${search.user_id}`} className="memory-filters" onSubmit={apply} aria-label="Filter memory">
      <Field label="Memory type">
        <select name="memory_type" defaultValue={search.memory_type ?? ''}>
          <Options values={memoryTypes} blank="Every type" />
        </select>
      </Field>
      <Field label="End user" field="user_id" error={error} hint="Only this end user's items (user_id).">
        <input name="user_id" defaultValue={search.user_id ?? ''} />
      </Field>
      <FormActions submitLabel="Apply filters">
        {search.memory_type || search.user_id ? (
          <Link className="button secondary" to="/memory" search={{ agent_id: search.agent_id }} {...EXACT_LINK}>
            Clear filters
          </Link>
        ) : null}
      </FormActions>
      <p className="hint memory-filters-note">
        To find items by their metadata, use{' '}
        <Link to="/memory" search={{ agent_id: search.agent_id, memory_type: search.memory_type, user_id: search.user_id, view: 'search' }} {...EXACT_LINK}>
          Search
        </Link>{' '}
        and its metadata filter.
      </p>
    </form>
  );
}

/** The search tab's form: the words, the shared filters and the metadata filter, written to the address. */
export function SearchForm({ search, memoryTypes, error, onRepeat }: { search: MemorySearch; memoryTypes: readonly string[]; error: unknown; onRepeat: () => void }) {
  const navigate = useNavigate();
  const [localError, setLocalError] = useState<unknown>();
  const shownError = localError ?? error;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { q = '', memory_type, user_id = '', filter = '', top_k = '', min_score = '' } = formValues(event.currentTarget);
    setLocalError(undefined);
    // An empty box would drop the search from the address: said here rather than silently ignored.
    if (q === '') {
      setLocalError(localValidationError('query', BLANK_CONTENT));
      return;
    }
    const parsed = parseMetadataFilter(filter);
    if (parsed.error) {
      setLocalError(parsed.error);
      return;
    }
    const next: MemorySearch = {
      agent_id: search.agent_id,
      view: 'search',
      q,
      memory_type: isMemoryType(memory_type) ? memory_type : undefined,
      user_id: user_id === '' ? undefined : user_id,
      filter: filter.trim() === '' ? undefined : filter,
      top_k: top_k === '' ? undefined : Number(top_k),
      min_score: min_score === '' ? undefined : Number(min_score),
    };
    const same = (Object.keys(next) as (keyof MemorySearch)[]).every((key) => next[key] === search[key]);
    // The same search again is a wish to see it afresh, which the address alone would not ask for.
    if (same) onRepeat();
    else void navigate({ to: '/memory', search: next });
  };
  return (
    <form key={search.agent_id} className="card memory-search" role="search" aria-label="Search memory" onSubmit={submit} noValidate>
      <ErrorNotice error={shownError} title="Could not search" />
      <Field label="Search for" field="query" error={shownError} hint="Words or a question: meaning and exact words both count.">
        <input name="q" type="search" defaultValue={search.q ?? ''} />
      </Field>
      <div className="memory-search-options">
        <Field label="Memory type" field="memory_type" error={shownError}>
          <select name="memory_type" defaultValue={search.memory_type ?? ''}>
            <Options values={memoryTypes} blank="Every type the agent keeps" />
          </select>
        </Field>
        <Field label="End user" field="user_id" error={shownError} hint="As this end user's turn would: their items and the shared ones.">
          <input name="user_id" defaultValue={search.user_id ?? ''} />
        </Field>
        <Field label="Results" field="top_k" error={shownError} hint="At most this many, 1 to 100.">
          <input name="top_k" type="number" min={1} max={100} step={1} defaultValue={search.top_k ?? 5} />
        </Field>
        <Field label="Minimum score" field="min_score" error={shownError} hint="0 to 1; weaker matches are left out.">
          <input name="min_score" type="number" min={0} max={1} step={0.05} defaultValue={search.min_score ?? ''} />
        </Field>
      </div>
      <JsonField label="Metadata filter" field="filter" error={shownError} hint={<>A JSON object; an item must have each key with exactly that value, e.g. {METADATA_EXAMPLE}.</>} rows={2} defaultValue={search.filter ?? ''} />
      <FormActions submitLabel="Search" />
    </form>
  );
}

type NewMemoryItem = RequestBody<'/api/v1/memory', 'post'>;

/** Adds an item to the agent's memory: its content, type, end user and metadata. */
export function AddMemoryItem({ agent, onDone }: { agent: Agent; onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const mutation = useMutation({
    mutationFn: ({ metadata, ...item }: Omit<NewMemoryItem, 'metadata'> & { metadata: string }) => {
      const parsed = checkedValue(parseOptionalJsonObject(metadata, 'metadata', METADATA_EXAMPLE));
      return call(client.POST('/api/v1/memory', { body: { ...item, ...(parsed ? { metadata: parsed } : {}) } }));
    },
    onSuccess: async () => {
      await invalidate('memory');
      onDone();
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const { content = '', memory_type, user_id = '', metadata = '' } = formValues(event.currentTarget);
    // The agent's own types are the only choices, so the select always holds one.
    const memoryType = isMemoryType(memory_type) ? memory_type : 'semantic';
    mutation.mutate({ agent_id: agent.id, memory_type: memoryType, content, ...(user_id === '' ? {} : { user_id }), metadata });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="new-memory-title" noValidate>
      <h2 id="new-memory-title">Add a memory item</h2>
      <ErrorNotice error={mutation.error} title="Could not add the item" />
      <Field label="Content" field="content" error={mutation.error} hint="What the agent should remember, up to 32,000 characters.">
        <textarea name="content" rows={3} autoFocus />
      </Field>
      <Field label="Memory type" field="memory_type" error={mutation.error} hint={`One of the types ${agent.name} keeps.`}>
        <select name="memory_type" defaultValue={agent.memory_types[0]}>
          <Options values={agent.memory_types} />
        </select>
      </Field>
      <Field label="End user" field="user_id" error={mutation.error} hint="The end user of your application it belongs to (user_id): only their turns and searches see it. Empty: shared by every end user.">
        <input name="user_id" />
      </Field>
      <JsonField label="Metadata" field="metadata" error={mutation.error} hint={<>Optional: a JSON object kept with the item, e.g. {METADATA_EXAMPLE}.</>} rows={3} />
      <FormActions submitLabel="Add to memory" pendingLabel="Adding…" pending={mutation.isPending} onCancel={onDone} />
    </form>
  );
}
