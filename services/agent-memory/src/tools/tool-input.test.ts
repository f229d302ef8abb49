import { FieldErrors, type DomainError } from '@agent-platform/kit';
import { OutboundPolicy, SecretBox } from '@agent-platform/kit/security';
import { describe, expect, it } from 'vitest';
import { httpTool } from './kinds/http.js';
import type { ToolSave } from './kinds/tool-kind.js';
import { checkConfigKeys } from './kinds/tool-kinds.js';
import { checkInputSchema, checkName } from './tool-input.js';
import { MASKED } from './tool-secrets.js';

/** The fields an errors list names, or [] when it holds none. */
function fieldsOf(errors: FieldErrors): string[] {
  try {
    errors.throwIfAny();
    return [];
  } catch (error) {
    return (error as DomainError).details.map((detail) => detail.field);
  }
}

const policy = new OutboundPolicy({ allowPrivateNetworks: false, resolve: () => Promise.resolve([{ address: '93.184.215.14', family: 4 }]) });
const secrets = new SecretBox([Buffer.alloc(32, 7)]);
const nothingElse = () => Promise.reject(new Error('an http tool asks nothing else at save'));

/** A save of a new tool, as ToolsService makes one. */
function saveOf(errors: FieldErrors): ToolSave {
  const actor = { kind: 'user' as const, userId: 'usr_1', tenantId: 'ten_1', role: 'owner', scopes: [] };
  return { actor, toolId: 'tool_1', name: 'lookup_order', stored: undefined, errors, services: { policy, secrets, workflows: { exists: nothingElse }, agents: { exists: nothingElse }, mcp: { listTools: nothingElse } } };
}

describe('tool input', () => {
  it('takes names a model can call: a lower-case letter, then up to 63 of a-z, 0-9 and _', () => {
    for (const name of ['a', 'lookup_order', `a${'b'.repeat(63)}`]) expect(fieldsOf(withErrors((errors) => checkName(name, errors))), name).toEqual([]);
    for (const name of ['', '1a', '_a', 'A', 'a-b', 'a b', `a${'b'.repeat(64)}`]) expect(fieldsOf(withErrors((errors) => checkName(name, errors))), name).toEqual(['name']);
  });

  it('compiles input_schema as draft 2020-12, allowing annotations it does not know', () => {
    const ok = [{}, { type: 'object', example: { a: 1 }, 'x-internal': true }, { $defs: { id: { type: 'string' } }, properties: { id: { $ref: '#/$defs/id' } } }];
    for (const schema of ok) expect(fieldsOf(withErrors((errors) => checkInputSchema(JSON.stringify(schema), errors)))).toEqual([]);
    // The same $id twice in a process is fine: each check compiles on its own.
    expect(fieldsOf(withErrors((errors) => checkInputSchema(JSON.stringify({ $id: 'https://example.com/args' }), errors)))).toEqual([]);
    expect(fieldsOf(withErrors((errors) => checkInputSchema(JSON.stringify({ $id: 'https://example.com/args' }), errors)))).toEqual([]);
    for (const bad of ['{"type":"strnig"}', '{"minLength":-1}', '{"$ref":"#/nope"}', 'true', 'not json', undefined]) {
      expect(fieldsOf(withErrors((errors) => checkInputSchema(bad, errors))), String(bad)).toEqual(['input_schema']);
    }
  });

  it('refuses config keys of another type by name', () => {
    expect(fieldsOf(withErrors((errors) => checkConfigKeys('http', { url: 'x', workflow_id: 'wf' }, errors)))).toEqual(['config.workflow_id']);
    expect(fieldsOf(withErrors((errors) => checkConfigKeys('workflow', { workflow_id: 'wf', headers: {} }, errors)))).toEqual(['config.headers']);
  });

  it('reads an http config: method upper-cased (POST by default), headers as strings without line breaks', async () => {
    const errors = new FieldErrors();
    const checked = await httpTool.check({ url: ' https://api.example.com/x ', headers: { Authorization: 'Bearer t' } }, saveOf(errors));
    expect(httpTool.visible(checked)).toEqual({ url: 'https://api.example.com/x', method: 'POST', headers: { Authorization: MASKED } });
    // Sealed at rest, to this tool and header.
    expect(checked.headers.Authorization).not.toContain('Bearer');
    expect((await httpTool.check({ url: 'https://api.example.com', method: 'patch' }, saveOf(errors))).method).toBe('PATCH');
    const odd = await httpTool.check(JSON.parse('{"url":"https://api.example.com","headers":{"__proto__":"v"}}') as Record<string, unknown>, saveOf(errors));
    expect(Object.hasOwn(odd.headers, '__proto__')).toBe(true);
    expect(fieldsOf(errors)).toEqual([]);

    const bad = new FieldErrors();
    await httpTool.check({ url: 'http://api.example.com', method: 'TRACE', headers: { 'X-A': 'one\r\nX-B: two', 'X B': 'v', 'X-C': 3 } }, saveOf(bad));
    expect(fieldsOf(bad).sort()).toEqual(['config.headers.X B', 'config.headers.X-A', 'config.headers.X-C', 'config.method', 'config.url']);
  });
});

function withErrors(check: (errors: FieldErrors) => unknown): FieldErrors {
  const errors = new FieldErrors();
  check(errors);
  return errors;
}
