import { describe, expect, it } from 'vitest';
import { policyFor, type RoutePolicy } from '../auth/policy.js';
import { buildOpenApiDocument } from './document.js';

// The API's contract as a product (decisions §1, §2), checked on every operation of the document
// the routes make: what a client generator and a reader need from each.

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: { type?: string; minimum?: number; maximum?: number; minLength?: number; enum?: unknown[]; format?: string };
}

interface Media {
  schema?: { $ref?: string; anyOf?: { $ref?: string }[] };
  example?: unknown;
  examples?: unknown;
}

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  parameters?: Parameter[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, Media> };
  responses?: Record<string, { description?: string; content?: Record<string, Media> }>;
}

interface Document {
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes?: Record<string, unknown> };
}

const API = '/api/v1';
const ERROR_REF = '#/components/schemas/Error';

/**
 * The MCP endpoint (decisions §12.11) speaks JSON-RPC: the refusals of the MCP transport are
 * JSON-RPC errors, as MCP clients read them (beside the Error schema where a 400 can be either).
 * Every other failure there is the Error schema.
 */
const MCP_TRANSPORT_ERROR_REF = '#/components/schemas/McpTransportError';
const JSON_RPC_STATUSES: Record<string, string[]> = { [`post ${API}/mcp`]: ['400', '406'] };

/** The component refs a response's JSON schema names, itself or as one of its alternatives. */
function refsOf(schema: Media['schema']): (string | undefined)[] {
  return schema?.anyOf ? schema.anyOf.map((alternative) => alternative.$ref) : [schema?.$ref];
}
const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/**
 * The path parameter a collection segment takes is `<singular>_id`, but for these. An API key is
 * `key_id` (decisions §1); a member is the user it is, by the `usr_` id (as `user_id` in its body);
 * a workflow's version is its number, `version` as in its body (decisions §13.1).
 */
const PARAMETER_OF: Record<string, string> = { 'api-keys': 'key_id', members: 'user_id', 'tool-calls': 'call_id', versions: 'version' };

function singular(segment: string): string {
  if (segment.endsWith('ies')) return `${segment.slice(0, -3)}y`;
  return segment.endsWith('s') ? segment.slice(0, -1) : segment;
}

/** The path parameter each `{…}` of `path` should be, from the segment before it. */
function expectedParameters(path: string): [string, string][] {
  const segments = path.split('/');
  return segments.flatMap((segment, index) => {
    const match = /^\{(.+)\}$/.exec(segment);
    if (!match) return [];
    const collection = segments[index - 1] ?? '';
    return [[match[1] ?? '', PARAMETER_OF[collection] ?? `${singular(collection)}_id`]];
  });
}

/** The policy row of an API operation; undefined outside /api/v1 (the probes). */
function policyOf(method: string, path: string): RoutePolicy | undefined {
  if (!path.startsWith(`${API}/`)) return undefined;
  return policyFor(method, path.slice(API.length).replace(/\{(\w+)\}/g, ':$1'));
}

function expectedSecurity(policy: RoutePolicy | undefined): Record<string, string[]>[] {
  if (!policy || policy.auth === 'none') return [];
  if (policy.auth === 'user') return [{ bearerAuth: [] }];
  return [{ bearerAuth: [] }, { apiKeyAuth: policy.scope ? [policy.scope] : [] }];
}

/** The statuses an operation must document, whatever its handler: decisions §2 applied to its row and its request. */
function requiredStatuses(operation: Operation, policy: RoutePolicy | undefined): string[] {
  const statuses = ['400', '500'];
  if (policy) statuses.push('429', '503');
  if (policy && policy.auth !== 'none') statuses.push('401', '403');
  if (operation.requestBody) statuses.push('413', '422');
  if (operation.parameters?.some((parameter) => parameter.in === 'query')) statuses.push('422');
  if (operation.parameters?.some((parameter) => parameter.in === 'path')) statuses.push('404');
  return [...new Set(statuses)].sort();
}

/** Everything wrong with one operation of `doc`; empty when it keeps the contract. */
function problemsOf(doc: Document, method: string, path: string): string[] {
  const operation = doc.paths[path]?.[method] ?? {};
  const problems: string[] = [];
  const policy = policyOf(method.toUpperCase(), path);
  if (path.startsWith(`${API}/`) && !policy) problems.push('no row in the policy table');

  const { operationId } = operation;
  if (!operationId) problems.push('no operationId');
  else if (!/^[a-z][a-zA-Z0-9]*$/.test(operationId)) problems.push(`operationId ${operationId} is not camelCase`);
  else {
    const all = Object.values(doc.paths).flatMap((item) => METHODS.flatMap((m) => (item[m]?.operationId ? [item[m].operationId] : [])));
    if (all.filter((id) => id === operationId).length > 1) problems.push(`operationId ${operationId} is not unique`);
  }

  const declared = new Set(doc.tags.map((tag) => tag.name));
  if (operation.tags?.length !== 1 || !declared.has(operation.tags[0] ?? '')) problems.push(`tags ${JSON.stringify(operation.tags)}: want one declared tag`);
  if (!operation.summary?.trim()) problems.push('no summary');

  if (!Array.isArray(operation.security)) problems.push('no security decision');
  else {
    if (JSON.stringify(operation.security) !== JSON.stringify(expectedSecurity(policy))) {
      problems.push(`security ${JSON.stringify(operation.security)}, the policy row says ${JSON.stringify(expectedSecurity(policy))}`);
    }
    for (const scheme of operation.security.flatMap((requirement) => Object.keys(requirement))) {
      if (!doc.components.securitySchemes?.[scheme]) problems.push(`security scheme ${scheme} is not defined`);
    }
  }

  const responses = operation.responses ?? {};
  if ('default' in responses) problems.push('a catch-all default response (document each status)');
  const key = `${method} ${path}`;
  if (!Object.keys(responses).some((status) => status.startsWith('2'))) problems.push('no success response');
  for (const [status, response] of Object.entries(responses)) {
    if (status.startsWith('2')) continue;
    const media = Object.keys(response.content ?? {});
    const refs = refsOf(response.content?.['application/json']?.schema);
    if (JSON_RPC_STATUSES[key]?.includes(status)) {
      if (media.join() !== 'application/json' || !refs.includes(MCP_TRANSPORT_ERROR_REF)) problems.push(`${status} does not answer the MCP transport's JSON-RPC error`);
    } else if (media.join() !== 'application/json' || refs.join() !== ERROR_REF) {
      problems.push(`${status} does not answer the shared Error schema`);
    }
    if (!response.description?.trim()) problems.push(`${status} has no description`);
  }
  const missing = requiredStatuses(operation, policy).filter((status) => !(status in responses));
  if (missing.length > 0) problems.push(`undocumented error statuses ${missing.join(', ')}`);

  const parameters = operation.parameters ?? [];
  for (const [placeholder, wanted] of expectedParameters(path)) {
    if (placeholder !== wanted) problems.push(`path parameter {${placeholder}} should be {${wanted}}`);
    if (!parameters.some((parameter) => parameter.in === 'path' && parameter.name === placeholder && parameter.required)) {
      problems.push(`path parameter ${placeholder} is not declared`);
    }
  }
  for (const parameter of parameters.filter((candidate) => candidate.in === 'query')) {
    const schema = parameter.schema ?? {};
    const numeric = schema.type === 'integer' || schema.type === 'number';
    if (numeric && (schema.minimum === undefined || schema.maximum === undefined)) problems.push(`query ${parameter.name} has no bounds`);
    // A date-time's format bounds it as an enum does.
    if (schema.type === 'string' && schema.minLength === undefined && !schema.enum && schema.format !== 'date-time') problems.push(`query ${parameter.name} has no bounds`);
    if (!parameter.description?.trim()) problems.push(`query ${parameter.name} has no description`);
  }

  for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
    if (media.example === undefined && media.examples === undefined) problems.push(`request body ${type} has no example`);
  }
  return problems;
}

function operationsOf(doc: Document): [string, string][] {
  return Object.entries(doc.paths).flatMap(([path, item]) => METHODS.filter((method) => item[method]).map((method): [string, string] => [method, path]));
}

// Built once, before the cases are listed: one case per operation of the document.
const doc = (await buildOpenApiDocument()) as Document;
const OPERATIONS = operationsOf(doc);

describe('the contract of every operation', () => {
  it('covers the whole API: every policy row and the probes', () => {
    expect(OPERATIONS.length).toBeGreaterThan(50);
    expect(OPERATIONS.filter(([, path]) => !path.startsWith(`${API}/`))).toEqual([
      ['get', '/healthz'],
      ['get', '/readyz'],
    ]);
  });

  it.each(OPERATIONS)('%s %s', (method, path) => {
    expect(problemsOf(doc, method, path)).toEqual([]);
  });
});

describe('the contract check', () => {
  function mutated(change: (copy: Document) => void): Document {
    const copy = structuredClone(doc);
    change(copy);
    return copy;
  }
  const op = (copy: Document, method: string, path: string): Operation => {
    const operation = copy.paths[path]?.[method];
    if (!operation) throw new Error(`${method} ${path} is not in the document`);
    return operation;
  };

  it('finds an operation without an operationId, or with a duplicate or non-camelCase one', () => {
    expect(problemsOf(mutated((copy) => delete op(copy, 'get', '/api/v1/agents').operationId), 'get', '/api/v1/agents')).toEqual(['no operationId']);
    const duplicate = mutated((copy) => (op(copy, 'get', '/api/v1/agents').operationId = 'createAgent'));
    expect(problemsOf(duplicate, 'get', '/api/v1/agents')).toEqual(['operationId createAgent is not unique']);
    const snake = mutated((copy) => (op(copy, 'get', '/api/v1/agents').operationId = 'list_agents'));
    expect(problemsOf(snake, 'get', '/api/v1/agents')).toEqual(['operationId list_agents is not camelCase']);
  });

  it('finds a missing tag, summary or security decision', () => {
    const bare = mutated((copy) => {
      const operation = op(copy, 'post', '/api/v1/webhooks');
      delete operation.tags;
      delete operation.summary;
      delete operation.security;
    });
    expect(problemsOf(bare, 'post', '/api/v1/webhooks')).toEqual(['tags undefined: want one declared tag', 'no summary', 'no security decision']);
    const open = mutated((copy) => (op(copy, 'post', '/api/v1/webhooks').security = []));
    expect(problemsOf(open, 'post', '/api/v1/webhooks')[0]).toMatch(/^security \[\], the policy row says/);
  });

  it('finds errors documented by a catch-all default only, or not with the Error schema', () => {
    const catchAll = mutated((copy) => {
      const operation = op(copy, 'get', '/api/v1/agents/{agent_id}');
      operation.responses = { '200': operation.responses?.['200'] ?? {}, default: { description: 'Error', content: { 'application/json': { schema: { $ref: ERROR_REF } } } } };
    });
    expect(problemsOf(catchAll, 'get', '/api/v1/agents/{agent_id}')).toEqual([
      'a catch-all default response (document each status)',
      'undocumented error statuses 400, 401, 403, 404, 422, 429, 500, 503',
    ]);
    const plain = mutated((copy) => {
      const notFound = op(copy, 'get', '/api/v1/agents/{agent_id}').responses?.['404'];
      if (notFound) notFound.content = { 'application/json': { schema: {} } };
    });
    expect(problemsOf(plain, 'get', '/api/v1/agents/{agent_id}')).toEqual(['404 does not answer the shared Error schema']);
  });

  it('finds a path parameter not named <resource>_id, an unbounded query parameter and a body without an example', () => {
    const renamed = mutated((copy) => {
      const item = copy.paths['/api/v1/agents/{agent_id}'] ?? {};
      const get = item['get'];
      if (get) get.parameters = get.parameters?.map((parameter) => (parameter.name === 'agent_id' ? { ...parameter, name: 'id' } : parameter));
      copy.paths['/api/v1/agents/{id}'] = item;
    });
    expect(problemsOf(renamed, 'get', '/api/v1/agents/{id}')).toContain('path parameter {id} should be {agent_id}');
    const unbounded = mutated((copy) => {
      const perPage = op(copy, 'get', '/api/v1/agents').parameters?.find((parameter) => parameter.name === 'per_page');
      if (perPage?.schema) delete perPage.schema.maximum;
      const body = op(copy, 'post', '/api/v1/agents').requestBody?.content['application/json'];
      if (body) delete body.example;
    });
    expect(problemsOf(unbounded, 'get', '/api/v1/agents')).toEqual(['query per_page has no bounds']);
    expect(problemsOf(unbounded, 'post', '/api/v1/agents')).toEqual(['request body application/json has no example']);
  });
});
