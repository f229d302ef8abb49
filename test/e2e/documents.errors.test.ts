import { describe, expect, it } from 'vitest';
import { Api, newAccount } from './harness/client.js';
import { expectError, expectStatus } from './harness/results.js';

/** decisions §2 and §17: what POST /memory/documents answers to forms and bodies it cannot take. */

const BOUNDARY = 'form-boundary-7d1';

/** A multipart body written by hand: what a careless or hostile client sends. */
function form(parts: { name: string; filename?: string; type?: string; value: string }[], boundary = BOUNDARY): string {
  return (
    parts
      .map(
        (part) =>
          `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}\r\n` +
          `${part.type === undefined ? '' : `Content-Type: ${part.type}\r\n`}\r\n${part.value}\r\n`,
      )
      .join('') + `--${boundary}--\r\n`
  );
}

async function setUp() {
  const api = new Api();
  const account = await newAccount(api);
  const agentId = expectStatus(await account.client.POST('/api/v1/agents', { body: { name: 'Librarian', type: 'assistant', config: { memory_extraction: false } } }), 201).id;
  const post = (raw: string, contentType = `multipart/form-data; boundary=${BOUNDARY}`) => api.post('/api/v1/memory/documents', { token: account.accessToken, raw, contentType });
  return { account, agentId, post };
}

describe('POST /memory/documents refuses', () => {
  it('a form without a file, with a field it does not know, with two files, or with metadata that is not a JSON object', async () => {
    const { agentId, post } = await setUp();
    expectError(await post(form([{ name: 'agent_id', value: agentId }])), 422, 'validation_error', ['file']);
    expectError(await post(form([{ name: 'agent_id', value: agentId }, { name: 'upload', filename: 'a.txt', type: 'text/plain', value: 'hello' }])), 422, 'validation_error', ['upload']);
    const twoFiles = form([
      { name: 'agent_id', value: agentId },
      { name: 'file', filename: 'a.txt', type: 'text/plain', value: 'one' },
      { name: 'file', filename: 'b.txt', type: 'text/plain', value: 'two' },
    ]);
    expectError(await post(twoFiles), 400, 'invalid_request');
    expectError(await post(form([{ name: 'file', filename: 'a.txt', type: 'text/plain', value: 'hello' }])), 422, 'validation_error', ['agent_id']);
    const badMetadata = form([
      { name: 'file', filename: 'a.txt', type: 'text/plain', value: 'hello' },
      { name: 'agent_id', value: agentId },
      { name: 'metadata', value: '[1, 2]' },
    ]);
    expectError(await post(badMetadata), 422, 'validation_error', ['metadata']);
  });

  it('a multipart body that cannot be read, a body of no type, and JSON that is neither a text nor a page', async () => {
    const { account, agentId, post } = await setUp();
    expectError(await post('--nothing here', 'multipart/form-data'), 400, 'invalid_request');
    expectError(await post(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nunterminated`), 400, 'invalid_request');
    const api = new Api();
    expectError(await api.post('/api/v1/memory/documents', { token: account.accessToken }), 400, 'invalid_request');
    expectError(await api.post('/api/v1/memory/documents', { token: account.accessToken, json: { agent_id: agentId } }), 422, 'validation_error', ['content']);
    expectError(await api.post('/api/v1/memory/documents', { token: account.accessToken, json: { agent_id: agentId, content: 'text', url: 'https://example.com' } }), 422, 'validation_error', ['content']);
    expectError(await api.post('/api/v1/memory/documents', { token: account.accessToken, json: { agent_id: agentId, content: 'text', refresh_seconds: 60 } }), 422, 'validation_error', ['refresh_seconds']);
    expectError(await api.post('/api/v1/memory/documents', { token: account.accessToken, json: { agent_id: agentId, url: 'https://example.com/help', refresh_seconds: 1 } }), 422, 'validation_error', ['refresh_seconds']);
    expect(expectStatus(await account.client.GET('/api/v1/memory/documents', { params: { query: { agent_id: agentId } } })).total).toBe(0);
  });

  it('a JSON body over 1 MiB (413), declared or streamed without a length: only forms may be larger', async () => {
    const { account, agentId } = await setUp();
    const api = new Api();
    const json = JSON.stringify({ agent_id: agentId, content: 'x'.repeat(1_100_000) });
    expectError(await api.post('/api/v1/memory/documents', { token: account.accessToken, raw: json, contentType: 'application/json' }), 413, 'payload_too_large');
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(json));
        controller.close();
      },
    });
    const response = await api.fetch(new URL('/api/v1/memory/documents', api.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${account.accessToken}`, 'content-type': 'application/json' },
      body: streamed,
      duplex: 'half',
    });
    expectError({ status: response.status, headers: response.headers, body: await response.json() }, 413, 'payload_too_large');
  });

  it('an empty file, and a file for an agent of another tenant', async () => {
    const { agentId, post } = await setUp();
    expectError(await post(form([{ name: 'agent_id', value: agentId }, { name: 'file', filename: 'empty.txt', type: 'text/plain', value: '' }])), 422, 'unsupported_document');
    const stranger = await setUp();
    expectError(await stranger.post(form([{ name: 'agent_id', value: agentId }, { name: 'file', filename: 'a.txt', type: 'text/plain', value: 'hello' }])), 404, 'not_found');
  });
});
