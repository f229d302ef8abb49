import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PageQuery } from './schemas.js';
import { checkUrl, fieldPath, nulFields, parseForPeople, requestError, validatorCompiler } from './validation.js';

describe('fieldPath', () => {
  it('writes JSON-pointer-ish paths', () => {
    expect(fieldPath(['nodes', 2, 'config', 'path'])).toBe('nodes[2].config.path');
    expect(fieldPath(['scopes', 1])).toBe('scopes[1]');
    expect(fieldPath([])).toBe('');
  });
});

describe('requestError', () => {
  const body = z.object({ name: z.string().min(1), tags: z.array(z.string()) });
  const issues = (schema: z.ZodType, value: unknown) => parseForPeople(schema, value).error?.issues ?? [];

  it('is 400 for a body that is not an object, 422 for its fields', () => {
    expect(requestError(issues(body, null), 'body')).toMatchObject({ code: 'invalid_request' });
    expect(requestError(issues(body, { name: '', tags: [1] }), 'body')).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'name' }, { field: 'tags[0]' }],
    });
  });

  it('is 400 for query text that is not a number, 422 when out of range', () => {
    expect(requestError(issues(PageQuery, { page: 'abc' }), 'querystring')).toMatchObject({ code: 'invalid_request', details: [{ field: 'page' }] });
    expect(requestError(issues(PageQuery, { page: ['1', '2'] }), 'querystring')).toMatchObject({ code: 'invalid_request' });
    expect(requestError(issues(PageQuery, { per_page: '101' }), 'querystring')).toMatchObject({ code: 'validation_error', details: [{ field: 'per_page' }] });
  });

  it('is 422, not 400, for a required query parameter that is absent', () => {
    const query = PageQuery.extend({ agent_id: z.string().min(1) });
    expect(requestError(issues(query, {}), 'querystring')).toMatchObject({ code: 'validation_error', details: [{ field: 'agent_id', message: 'is required' }] });
    expect(requestError(issues(query, { agent_id: ['a', 'b'] }), 'querystring')).toMatchObject({ code: 'invalid_request', details: [{ field: 'agent_id' }] });
  });

  it('reads paging with defaults', () => {
    expect(PageQuery.parse({})).toEqual({ page: 1, per_page: 20 });
    expect(PageQuery.parse({ page: '3', per_page: '50', tenant_id: 'tnt_1' })).toEqual({ page: 3, per_page: 50, tenant_id: 'tnt_1' });
  });
});

describe('NUL characters, which PostgreSQL cannot store', () => {
  it('are refused in the URL, encoded in either case, as invalid_request', () => {
    expect(() => checkUrl('/api/v1/webhooks/wh_%00')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => checkUrl('/api/v1/agents?tenant_id=a%00')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
    expect(() => checkUrl('/api/v1/agents?q=100%25')).not.toThrow();
  });

  it('are named field by field in a body, keys included', () => {
    expect(nulFields({ name: 'a\u0000', nodes: [{ config: { path: '/\u0000' } }], ok: 'fine', ['k\u0000']: 1 })).toEqual([
      { field: 'name', message: expect.stringContaining('NUL') },
      { field: 'nodes[0].config.path', message: expect.stringContaining('NUL') },
      { field: 'k\u0000', message: expect.stringContaining('NUL') },
    ]);
    expect(nulFields({ a: ['b', 1, null, { c: true }] })).toEqual([]);
  });

  it('make a body a 422 validation_error before the schema is consulted', () => {
    const validate = validatorCompiler({ schema: z.object({ name: z.string() }), httpPart: 'body', method: 'POST', url: '/x' });
    const outcome = validate({ name: 'a\u0000b' }) as { error?: { code: string; details: unknown[] } };
    expect(outcome.error?.code).toBe('validation_error');
    expect(outcome.error?.details).toEqual([{ field: 'name', message: expect.stringContaining('NUL') }]);
  });
});
