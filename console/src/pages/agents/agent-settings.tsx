import type { Agent, RequestBody, Tool } from '@agent-platform/client';
import { useMutation } from '@tanstack/react-query';
import { Link, useNavigate } from '@tanstack/react-router';
import { useId, useState, type FormEvent } from 'react';
import { call, fieldError } from '../../api/call.js';
import { useClient, useInvalidate, useTenantQuery } from '../../api/session-context.js';
import { ConfirmButton } from '../../ui/confirm-button.js';
import { Empty, ErrorNotice, QueryState } from '../../ui/feedback.js';
import { Field, formValues } from '../../ui/form.js';
import { FormActions } from '../../ui/form-actions.js';
import { Time } from '../../ui/page.js';
import { allTools } from './all-tools.js';
import { checkedValues } from './checked-values.js';
import { MemoryTypeChoices } from './memory-type-choices.js';

type AgentChange = RequestBody<'/api/v1/agents/{agent_id}', 'patch'>;
type ConfigChange = NonNullable<AgentChange['config']>;
type NumberSetting = 'temperature' | 'top_p' | 'max_tokens' | 'max_tool_rounds';

/** The config's numbers, as the form asks for them; an empty one is the platform's default. */
const NUMBER_SETTINGS: readonly { key: NumberSetting; label: string; hint: string; step: string; inputMode: 'decimal' | 'numeric' }[] = [
  { key: 'temperature', label: 'Temperature', hint: '0 to 2', step: '0.1', inputMode: 'decimal' },
  { key: 'top_p', label: 'Top p', hint: '0 to 1', step: '0.05', inputMode: 'decimal' },
  { key: 'max_tokens', label: 'Max tokens', hint: 'Longest reply', step: '1', inputMode: 'numeric' },
  { key: 'max_tool_rounds', label: 'Max tool rounds', hint: '1 to 32; default 8', step: '1', inputMode: 'numeric' },
];

/** config.memory_extraction's choices (decisions §14.2); the empty one leaves it to the default. */
const EXTRACTION_CHOICES: readonly { value: string; label: string; setting: ConfigChange['memory_extraction'] }[] = [
  { value: '', label: 'Default (per end user when it keeps semantic memory)', setting: undefined },
  { value: 'true', label: 'Per end user: from turns that name one', setting: true },
  { value: 'shared', label: 'Shared: from turns without an end user too', setting: 'shared' },
  { value: 'false', label: 'Off', setting: false },
];

/** What the API resolved the setting to. */
const EXTRACTION_NOW: Record<Agent['memory_extraction'], string> = {
  off: 'off',
  per_user: 'from turns that name an end user',
  shared: 'from every turn, into the shared memories when no end user is named',
};

/** The agent's settings form (PATCH), and deleting the agent. */
export function AgentSettings({ agent }: { agent: Agent }) {
  // Kept here: the form below is made anew by the save it reports.
  const [savedVersion, setSavedVersion] = useState<string | undefined>(undefined);
  return (
    <>
      {/* A new key after every save: the form starts again from what the API now holds. */}
      <SettingsForm key={agent.updated_at} agent={agent} saved={savedVersion === agent.updated_at} onSaved={setSavedVersion} />
      <DeleteAgent agent={agent} />
    </>
  );
}

function SettingsForm({ agent, saved, onSaved }: { agent: Agent; saved: boolean; onSaved: (version: string | undefined) => void }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const tools = useTenantQuery(['tools', 'all'], allTools);
  const mutation = useMutation({
    mutationFn: (change: AgentChange) => call(client.PATCH('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agent.id } }, body: change })),
    onSuccess: async (updated) => {
      onSaved(updated.updated_at);
      await invalidate('agents');
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    onSaved(undefined);
    const form = event.currentTarget;
    const values = formValues(form);
    const chosen = new Set(checkedValues(form, 'tools'));
    // The agent's order first (the model is offered them in that order), newly ticked ones after.
    const toolIds = [...agent.tools.filter((id) => chosen.has(id)), ...[...chosen].filter((id) => !agent.tools.includes(id))];
    mutation.mutate({
      name: values.name ?? '',
      type: values.type ?? '',
      description: values.description ?? '',
      memory_types: checkedValues(form, 'memory_types'),
      config: configFrom(values),
      tools: toolIds,
    });
  };
  const error = mutation.error;
  const sentTools = mutation.variables?.tools ?? [];
  return (
    <form className="card" onSubmit={submit} aria-labelledby="agent-settings-title" noValidate>
      <h2 id="agent-settings-title">Settings</h2>
      <ErrorNotice error={error} title="Could not save the agent" />
      {saved && !mutation.isPending ? (
        <p className="notice notice-info" role="status">
          Saved.
        </p>
      ) : null}
      <Field label="Name" field="name" error={error}>
        <input name="name" defaultValue={agent.name} required />
      </Field>
      <Field label="Type" field="type" error={error} hint="a-z, 0-9, _ and -, e.g. support">
        <input name="type" defaultValue={agent.type} required />
      </Field>
      <Field label="Description" field="description" error={error}>
        <textarea name="description" rows={2} defaultValue={agent.description ?? ''} />
      </Field>
      <MemoryTypeChoices error={error} checked={agent.memory_types} />

      <fieldset>
        <legend>Model settings</legend>
        <Field label="Model" field="config.model" error={error} hint="Leave empty for the platform's default.">
          <input name="model" defaultValue={agent.config.model ?? ''} />
        </Field>
        <Field label="System prompt" field="config.system_prompt" error={error}>
          <textarea name="system_prompt" rows={4} defaultValue={agent.config.system_prompt ?? ''} />
        </Field>
        <div className="settings-numbers">
          {NUMBER_SETTINGS.map(({ key, label, hint, step, inputMode }) => (
            <Field key={key} label={label} field={`config.${key}`} error={error} hint={hint}>
              <input name={key} type="number" step={step} inputMode={inputMode} defaultValue={agent.config[key] ?? ''} />
            </Field>
          ))}
        </div>
        <Field
          label="Memory extraction"
          field="config.memory_extraction"
          error={error}
          hint={`Facts learned from turns go into semantic memory. Now: ${EXTRACTION_NOW[agent.memory_extraction]}.`}
        >
          <select name="memory_extraction" defaultValue={EXTRACTION_CHOICES.find(({ setting }) => setting === agent.config.memory_extraction)?.value ?? ''}>
            {EXTRACTION_CHOICES.map(({ value, label }) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </Field>
        <p className="hint">Empty fields take the platform's defaults.</p>
      </fieldset>

      <fieldset>
        <legend>Tools it may call</legend>
        <QueryState query={tools} loadingLabel="Loading tools…">
          {(list) =>
            list.length === 0 ? (
              <Empty title="No tools yet">
                <p>
                  <Link to="/tools">Create a tool</Link> to let this agent act: call an HTTP endpoint, run a workflow or use an MCP server.
                </p>
              </Empty>
            ) : (
              <ToolChoices tools={list} agent={agent} messageOf={(toolId) => messageForTool(error, sentTools, toolId)} />
            )
          }
        </QueryState>
        <FieldMessage id="tools-error" message={fieldError(error, 'tools')} />
      </fieldset>

      <FormActions submitLabel="Save changes" pendingLabel="Saving…" pending={mutation.isPending} />
      <p className="muted">
        Created <Time value={agent.created_at} />, last changed <Time value={agent.updated_at} />.
      </p>
    </form>
  );
}

function ToolChoices({ tools, agent, messageOf }: { tools: Tool[]; agent: Agent; messageOf: (toolId: string) => string | undefined }) {
  const baseId = useId();
  return (
    <ul className="tool-choices">
      {tools.map((tool, index) => {
        const message = messageOf(tool.id);
        const errorId = `${baseId}-${index}-error`;
        return (
          <li key={tool.id}>
            <label className="checkbox">
              <input type="checkbox" name="tools" value={tool.id} defaultChecked={agent.tools.includes(tool.id)} aria-invalid={message ? true : undefined} aria-describedby={message ? errorId : undefined} /> <code>{tool.name}</code>
            </label>
            <span className="badge">{tool.type}</span>
            {tool.requires_approval ? <span className="badge badge-awaiting_approval">needs approval</span> : null}
            {tool.description ? <span className="muted tool-choice-description">{tool.description}</span> : null}
            <FieldMessage id={errorId} message={message} />
          </li>
        );
      })}
    </ul>
  );
}

/** The API's message for `tools[i]`, where i is this tool's place in the list that was sent. */
function messageForTool(error: unknown, sent: readonly string[], toolId: string): string | undefined {
  const index = sent.indexOf(toolId);
  return index < 0 ? undefined : fieldError(error, `tools[${index}]`);
}

function FieldMessage({ id, message }: { id: string; message: string | undefined }) {
  if (!message) return null;
  return (
    <small id={id} className="field-error">
      {message}
    </small>
  );
}

/** The config as the form says it: only the keys given, so an empty field means the platform default. */
function configFrom(values: Record<string, string>): ConfigChange {
  const config: ConfigChange = {};
  const text = (key: 'model' | 'system_prompt') => {
    const value = values[key]?.trim();
    if (value) config[key] = values[key];
  };
  text('model');
  text('system_prompt');
  for (const { key } of NUMBER_SETTINGS) {
    const value = values[key]?.trim();
    if (value) config[key] = Number(value);
  }
  const extraction = EXTRACTION_CHOICES.find(({ value }) => value === values.memory_extraction)?.setting;
  if (extraction !== undefined) config.memory_extraction = extraction;
  return config;
}

function DeleteAgent({ agent }: { agent: Agent }) {
  const client = useClient();
  const invalidate = useInvalidate();
  const navigate = useNavigate();
  const mutation = useMutation({
    mutationFn: () => call(client.DELETE('/api/v1/agents/{agent_id}', { params: { path: { agent_id: agent.id } } })),
    onSuccess: async () => {
      await navigate({ to: '/agents' });
      await invalidate('agents');
    },
  });
  return (
    <section className="card danger-zone" aria-labelledby="delete-agent-title">
      <h2 id="delete-agent-title">Delete this agent</h2>
      <p>Its sessions, messages, memory items and documents are deleted with it. This cannot be undone.</p>
      <ErrorNotice error={mutation.error} title="Could not delete the agent" />
      <ConfirmButton
        label="Delete agent"
        question={`Delete ${agent.name} and everything it keeps?`}
        confirmLabel="Delete permanently"
        pending={mutation.isPending}
        pendingLabel="Deleting…"
        onConfirm={() => mutation.mutate()}
      />
    </section>
  );
}
