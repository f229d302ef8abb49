import type { RequestBody, Tool } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { call, describeError, fieldError } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { checkedValue, parseJsonObject } from '../../api/local-errors.js';
import { ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { JsonField } from '../../ui/json-field.js';
import { Options } from '../../ui/options.js';
import { TOOL_FORMS } from '../../generated/tool-forms.js';

type ToolBody = RequestBody<'/api/v1/tools', 'post'>;
type ToolType = ToolBody['type'];
type ToolConfig = ToolBody['config'];

type FormField = (typeof TOOL_FORMS)[ToolType]['fields'][number];
const TOOL_TYPES = Object.keys(TOOL_FORMS) as ToolType[];
const DEFAULT_SCHEMA = JSON.stringify({ type: 'object', properties: {}, required: [] }, null, 2);

interface HeaderRow {
  key: number;
  name: string;
  value: string;
}

let headerRows = 0;
const headerRow = (name = '', value = ''): HeaderRow => ({ key: (headerRows += 1), name, value });

/** Create a tool (no `tool`) or replace one (PUT: what the form leaves out is reset). */
export function ToolForm({ tool, onDone }: { tool: Tool | undefined; onDone: () => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const titleId = useId();
  const [type, setType] = useState<ToolType>(tool?.type ?? 'http');
  const [headers, setHeaders] = useState<HeaderRow[]>(() => Object.entries(recordOf(tool?.config.headers)).map(([name, value]) => headerRow(name, value)));
  const mutation = useMutation({
    mutationFn: (form: ToolFormValues) => {
      const body = toolBody(form);
      return tool ? call(client.PUT('/api/v1/tools/{tool_id}', { params: { path: { tool_id: tool.id } }, body })) : call(client.POST('/api/v1/tools', { body }));
    },
    onSuccess: async () => {
      // Agents show their tools' names: both lists may change.
      await Promise.all([invalidate('tools'), invalidate('agents')]);
      onDone();
    },
  });
  const error = mutation.error;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    mutation.mutate({ type, values: formValues(event.currentTarget), headers });
  };

  return (
    <form className="card tool-form" onSubmit={submit} aria-labelledby={titleId} noValidate>
      <h2 id={titleId}>{tool ? `Edit ${tool.name}` : 'New tool'}</h2>
      <ErrorNotice error={error} title={tool ? 'Could not save the tool' : 'Could not create the tool'} />
      <Field label="Name" field="name" error={error} hint="What the model calls it by: a-z first, then a-z, 0-9 and _, e.g. lookup_order.">
        <input name="name" defaultValue={tool?.name ?? ''} required autoFocus autoComplete="off" />
      </Field>
      <Field label="Description" field="description" error={error} hint="Shown to the model: what the tool does and when to use it.">
        <textarea name="description" rows={2} defaultValue={tool?.description ?? ''} />
      </Field>
      <Field label="Type" field="type" error={error}>
        <select name="type" value={type} onChange={(event) => setType(event.target.value as ToolType)}>
          {TOOL_TYPES.map((value) => (
            <option key={value} value={value}>
              {TOOL_FORMS[value].label} ({value})
            </option>
          ))}
        </select>
      </Field>

      {TOOL_FORMS[type].fields.map((field) => (
        <ConfigControl key={`${type}.${field.key}`} field={field} tool={tool} error={error} headers={headers} onHeaders={setHeaders} sent={mutation.variables?.values ?? {}} />
      ))}
      {TOOL_FORMS[type].schemas === 'own' ? (
        <JsonField
          label="Input schema (JSON)"
          field="input_schema"
          error={error}
          hint="A JSON Schema of the arguments the model gives."
          rows={8}
          defaultValue={tool?.input_schema ? JSON.stringify(tool.input_schema, null, 2) : DEFAULT_SCHEMA}
        />
      ) : tool?.discovered && tool.discovered.length > 0 ? (
        <p className="hint">The server listed: {tool.discovered.map((found) => found.name).join(', ')}.</p>
      ) : null}
      <div className="field">
        <label className="checkbox">
          <input type="checkbox" name="requires_approval" defaultChecked={tool?.requires_approval ?? false} /> Requires approval
        </label>
        <small className="hint">Each call waits for a person to approve or reject it before it runs.</small>
      </div>
      <FormActions submitLabel={tool ? 'Save tool' : 'Create tool'} pendingLabel="Saving…" pending={mutation.isPending} onCancel={onDone} />
    </form>
  );
}

interface ConfigControlProps {
  field: FormField;
  tool: Tool | undefined;
  error: unknown;
  headers: HeaderRow[];
  onHeaders: (headers: HeaderRow[]) => void;
  /** The form's values as last sent, to name a refused line by what it said. */
  sent: Record<string, string>;
}

/** One control of the type's config, as its kind describes it (services/agent-memory/src/tools/kinds). */
function ConfigControl({ field, tool, error, headers, onHeaders, sent }: ConfigControlProps) {
  const stored = tool?.config[field.key];
  switch (field.input) {
    case 'url':
      return (
        <Field label={field.label} field={`config.${field.key}`} error={error} hint={field.hint}>
          <input name={field.key} type="url" defaultValue={stringOf(stored)} required autoComplete="off" />
        </Field>
      );
    case 'choice':
      return (
        <Field label={field.label} field={`config.${field.key}`} error={error}>
          <select name={field.key} defaultValue={stringOf(stored) || field.default}>
            <Options values={field.choices} />
          </select>
        </Field>
      );
    case 'lines':
      return (
        <>
          <Field label={field.label} field={`config.${field.key}`} error={error} hint={field.hint}>
            <textarea name={field.key} rows={3} defaultValue={Array.isArray(stored) ? (stored as unknown[]).join('\n') : ''} />
          </Field>
          <LineErrors field={field.key} error={error} sent={linesOf(sent[field.key])} />
        </>
      );
    case 'headers':
      return <HeadersEditor label={field.label} headers={headers} onChange={onHeaders} error={error} />;
    case 'workflow':
      return <WorkflowChoice label={field.label} name={field.key} error={error} current={stringOf(stored)} />;
    case 'agent':
      return <AgentChoice label={field.label} name={field.key} error={error} current={stringOf(stored)} />;
  }
}

/** The API names a refused line by its index in what was sent (config.allowed_tools[i]): said here by the line. */
function LineErrors({ field, error, sent }: { field: string; error: unknown; sent: readonly string[] }) {
  const pattern = new RegExp(`^config\\.${field}\\[(\\d+)\\]$`);
  const refused = describeError(error).fields.flatMap((detail) => {
    const index = pattern.exec(detail.field)?.[1];
    return index === undefined ? [] : [{ name: sent[Number(index)] ?? `#${Number(index) + 1}`, message: detail.message }];
  });
  if (refused.length === 0) return null;
  return (
    <ul className="field-error allowed-tools-errors">
      {refused.map((detail) => (
        <li key={detail.name}>
          <code>{detail.name}</code>: {detail.message}
        </li>
      ))}
    </ul>
  );
}

interface Choice {
  label: string;
  name: string;
  error: unknown;
  current: string;
}

function WorkflowChoice(props: Choice) {
  const workflows = useTenantQuery(['workflows', 'for-tools'], (client) => call(client.GET('/api/v1/workflows', { params: { query: { per_page: 100 } } })));
  return (
    <QueryState query={workflows} loadingLabel="Loading workflows…">
      {(list) => <ResourceSelect {...props} items={list.items} what="workflow" where="/workflows" hint="Run with the arguments as its input; its output is the result." />}
    </QueryState>
  );
}

function AgentChoice(props: Choice) {
  const agents = useTenantQuery(['agents', 'for-tools'], (client) => call(client.GET('/api/v1/agents', { params: { query: { per_page: 100 } } })));
  return (
    <QueryState query={agents} loadingLabel="Loading agents…">
      {(list) => <ResourceSelect {...props} items={list.agents} what="agent" where="/agents" hint="The model's message becomes a turn of this agent, in a session of its own; its answer is the result." />}
    </QueryState>
  );
}

/** A select of the tenant's workflows or agents, keeping a stored id no longer listed. */
function ResourceSelect({ label, name, error, current, items, what, where, hint }: Choice & { items: readonly { id: string; name: string }[]; what: string; where: string; hint: string }) {
  return (
    <Field
      label={label}
      field={`config.${name}`}
      error={error}
      hint={
        items.length === 0 ? (
          <>
            No {what}s yet: <Link to={where}>create one</Link> first.
          </>
        ) : (
          hint
        )
      }
    >
      <select name={name} defaultValue={current}>
        <option value="">Choose {what === 'agent' ? 'an' : 'a'} {what}</option>
        {current && !items.some((item) => item.id === current) ? <option value={current}>{current}</option> : null}
        {items.map((item) => (
          <option key={item.id} value={item.id}>
            {item.name}
          </option>
        ))}
      </select>
    </Field>
  );
}

function HeadersEditor({ label, headers, onChange, error }: { label: string; headers: HeaderRow[]; onChange: (headers: HeaderRow[]) => void; error: unknown }) {
  const set = (key: number, change: Partial<HeaderRow>) => onChange(headers.map((row) => (row.key === key ? { ...row, ...change } : row)));
  const message = fieldError(error, 'config.headers');
  return (
    <fieldset>
      <legend>{label}</legend>
      <p className="hint">Sent with every request. Values are kept sealed and read back as ***; leave *** to keep the stored value.</p>
      {headers.length > 0 ? (
        <ul className="headers">
          {headers.map((row, index) => (
            <li key={row.key} className="header-row">
              <input aria-label={`Header ${index + 1} name`} placeholder="Name" value={row.name} onChange={(event) => set(row.key, { name: event.target.value })} autoComplete="off" />
              <input aria-label={`Header ${index + 1} value`} placeholder="Value" value={row.value} onChange={(event) => set(row.key, { value: event.target.value })} autoComplete="off" />
              <button type="button" className="secondary" onClick={() => onChange(headers.filter((other) => other.key !== row.key))} aria-label={`Remove header ${index + 1}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {message ? <small className="field-error">{message}</small> : null}
      <button type="button" className="secondary" onClick={() => onChange([...headers, headerRow()])}>
        Add header
      </button>
    </fieldset>
  );
}

/** What the form holds when submitted: its type, its named controls and its header rows. */
interface ToolFormValues {
  type: ToolType;
  values: Record<string, string>;
  headers: HeaderRow[];
}

/**
 * The request the form says; an input schema that is not a JSON object throws its local
 * validation error (inside the mutation, so nothing is sent and it shows as the API's would).
 */
function toolBody({ type, values, headers }: ToolFormValues): ToolBody {
  const description = values.description?.trim() ? values.description : undefined;
  const inputSchema = TOOL_FORMS[type].schemas !== 'own' ? undefined : checkedValue(parseJsonObject(values.input_schema ?? '', 'input_schema', '{"type": "object", "properties": {}}'));
  return {
    name: values.name ?? '',
    ...(description ? { description } : {}),
    type,
    config: configFrom(type, values, headers),
    ...(inputSchema ? { input_schema: inputSchema } : {}),
    requires_approval: values.requires_approval === 'on',
  };
}

/** The config the type's controls say: a header list or a list of lines left empty is left out (lines: null). */
function configFrom(type: ToolType, values: Record<string, string>, headers: HeaderRow[]): ToolConfig {
  const config: Record<string, unknown> = {};
  for (const field of TOOL_FORMS[type].fields) {
    if (field.input === 'headers') {
      const given = Object.fromEntries(headers.filter((row) => row.name.trim() !== '').map((row) => [row.name.trim(), row.value]));
      if (Object.keys(given).length > 0) config[field.key] = given;
    } else if (field.input === 'lines') {
      const lines = linesOf(values[field.key]);
      config[field.key] = lines.length > 0 ? lines : null;
    } else {
      config[field.key] = values[field.key] ?? (field.input === 'choice' ? field.default : '');
    }
  }
  return config;
}

/** A textarea's non-empty lines, trimmed. */
function linesOf(text: string | undefined): string[] {
  return (text ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function recordOf(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null) return {};
  return Object.fromEntries(Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}
