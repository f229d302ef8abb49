import { DomainError, FieldErrors, type FieldError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { checkGraph } from '../workflows/graph.js';

function check(config: unknown): { config: unknown; problems: FieldError[] } {
  const errors = new FieldErrors();
  const graph = checkGraph([{ id: 'i', type: 'integration', config }], [], errors);
  try {
    errors.throwIfAny();
    return { config: graph.nodes[0]?.config, problems: [] };
  } catch (error) {
    if (error instanceof DomainError) return { config: undefined, problems: error.details };
    throw error;
  }
}

const fieldsOf = (config: unknown) => check(config).problems.map((problem) => problem.field);

describe('integration service', () => {
  it.each([
    ['missing', {}, /required; one of http, slack, email/],
    ['unknown', { service: 'teams' }, /not a known service; one of http, slack, email/],
    ['not a string', { service: 1 }, /not a known service/],
  ])('is refused when %s', (_name, config, message) => {
    expect(check(config).problems).toEqual([{ field: 'nodes[0].config.service', message: expect.stringMatching(message) }]);
  });
});

describe('http integration', () => {
  it('defaults the method to POST and headers to {}', () => {
    expect(check({ service: 'http', url: 'https://example.com/hook' }).config).toEqual({ service: 'http', url: 'https://example.com/hook', method: 'POST', headers: {} });
  });

  it('keeps method, headers, body and timeout', () => {
    const config = { service: 'http', url: 'http://localhost:8080/x?y=1', method: 'delete', headers: { Authorization: 'Bearer {{ input.token }}' }, body: [{ a: '{{ input.a }}' }, 1], timeout_ms: 10 };
    expect(check(config).config).toEqual({ ...config, method: 'DELETE' });
  });

  it('takes a URL that is a template', () => {
    expect(check({ service: 'http', url: '{{ input.callback }}' }).problems).toEqual([]);
  });

  it.each([
    ['no url', { service: 'http' }, ['nodes[0].config.url']],
    ['a relative url', { service: 'http', url: '/hook' }, ['nodes[0].config.url']],
    ['an ftp url', { service: 'http', url: 'ftp://example.com/x' }, ['nodes[0].config.url']],
    ['a bad url template', { service: 'http', url: 'https://x/{{ input.id' }, ['nodes[0].config.url']],
    ['an unknown method', { service: 'http', url: 'https://x', method: 'TRACE' }, ['nodes[0].config.method']],
    ['headers as a list', { service: 'http', url: 'https://x', headers: ['a'] }, ['nodes[0].config.headers']],
    ['a header that is no string', { service: 'http', url: 'https://x', headers: { 'X-Count': 1 } }, ['nodes[0].config.headers["X-Count"]']],
    ['a bad header name', { service: 'http', url: 'https://x', headers: { 'Bad Name': 'x' } }, ['nodes[0].config.headers["Bad Name"]']],
    ['a header with a line break', { service: 'http', url: 'https://x', headers: { Accept: 'a\r\nX-Evil: 1' } }, ['nodes[0].config.headers.Accept']],
    ['a bad header template', { service: 'http', url: 'https://x', headers: { Accept: '{{ }}' } }, ['nodes[0].config.headers.Accept']],
    ['a bad body template', { service: 'http', url: 'https://x', body: { items: [{ text: '{{ input.a' }] } }, ['nodes[0].config.body.items[0].text']],
    ['a bad timeout', { service: 'http', url: 'https://x', timeout_ms: -1 }, ['nodes[0].config.timeout_ms']],
    ['a slack key', { service: 'http', url: 'https://x', text: 'hi' }, ['nodes[0].config.text']],
  ])('refuses %s', (_name, config, expected) => {
    expect(fieldsOf(config)).toEqual(expected);
  });
});

describe('slack integration', () => {
  it('takes a webhook URL and a text template', () => {
    const config = { service: 'slack', webhook_url: 'https://hooks.slack.com/services/T/B/X', text: 'New order {{ input.id }}' };
    expect(check(config).config).toEqual(config);
  });

  it.each([
    ['no webhook_url', { service: 'slack', text: 'x' }, ['nodes[0].config.webhook_url']],
    ['no text', { service: 'slack', webhook_url: 'https://x' }, ['nodes[0].config.text']],
    ['a bad webhook_url', { service: 'slack', webhook_url: 'hooks.slack.com', text: 'x' }, ['nodes[0].config.webhook_url']],
    ['a bad text template', { service: 'slack', webhook_url: 'https://x', text: '{{ 1 + }}' }, ['nodes[0].config.text']],
    ['an http key', { service: 'slack', webhook_url: 'https://x', text: 'x', method: 'GET' }, ['nodes[0].config.method']],
  ])('refuses %s', (_name, config, expected) => {
    expect(fieldsOf(config)).toEqual(expected);
  });
});

describe('email integration', () => {
  it('takes one address or a list, a subject and a text', () => {
    expect(check({ service: 'email', to: 'ops@example.com', subject: 'Hi', text: 'Body' }).config).toEqual({ service: 'email', to: ['ops@example.com'], subject: 'Hi', text: 'Body' });
    const config = { service: 'email', to: ['a@example.com', 'b.c+tag@mail.example.org', '{{ input.email }}', 'root@localhost'], subject: 'Order {{ input.id }}', text: '{{ input }}', timeout_ms: 5_000 };
    expect(check(config).config).toEqual(config);
  });

  it.each([
    ['no to', { service: 'email', subject: 's', text: 't' }, ['nodes[0].config.to']],
    ['an empty list', { service: 'email', to: [], subject: 's', text: 't' }, ['nodes[0].config.to']],
    ['51 addresses', { service: 'email', to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`), subject: 's', text: 't' }, ['nodes[0].config.to']],
    ['a bad address', { service: 'email', to: 'not-an-address', subject: 's', text: 't' }, ['nodes[0].config.to']],
    ['a bad address in a list', { service: 'email', to: ['a@example.com', 'a@@example.com', 5], subject: 's', text: 't' }, ['nodes[0].config.to[1]', 'nodes[0].config.to[2]']],
    ['two addresses in one string', { service: 'email', to: 'a@example.com, b@example.com', subject: 's', text: 't' }, ['nodes[0].config.to']],
    ['no subject', { service: 'email', to: 'a@example.com', text: 't' }, ['nodes[0].config.subject']],
    ['a subject of two lines', { service: 'email', to: 'a@example.com', subject: 'a\nBcc: x@example.com', text: 't' }, ['nodes[0].config.subject']],
    ['no text', { service: 'email', to: 'a@example.com', subject: 's' }, ['nodes[0].config.text']],
    ['a bad text template', { service: 'email', to: 'a@example.com', subject: 's', text: '{{ nope }}' }, ['nodes[0].config.text']],
    ['an unknown key', { service: 'email', to: 'a@example.com', subject: 's', text: 't', cc: 'b@example.com' }, ['nodes[0].config.cc']],
  ])('refuses %s', (_name, config, expected) => {
    expect(fieldsOf(config)).toEqual(expected);
  });
});
