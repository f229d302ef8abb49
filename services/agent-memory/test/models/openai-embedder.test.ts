import { expectError } from '@agent-platform/kit/testing';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { normalised } from '../../src/models/embedder.js';
import { OpenAIEmbedder } from '../../src/models/openai-embedder.js';
import { fakeVector, refusedBaseURL, startFakeOpenAI, type FakeOpenAI } from '../support/fake-openai.js';

const TIMEOUT_MS = 300;
const DIMENSIONS = 8;
const texts = ['The invoice INV-20931 was paid.', 'Shipping takes three days.', 'Refunds are issued within a week.'];

let fake: FakeOpenAI;
let embedder: OpenAIEmbedder;

beforeEach(async () => {
  fake = await startFakeOpenAI();
  embedder = new OpenAIEmbedder({ baseURL: fake.baseURL, apiKey: 'sk-embed', model: 'text-embedding-3-small', dimensions: DIMENSIONS, timeoutMs: TIMEOUT_MS });
});

afterEach(async () => {
  await fake.close();
});

function norm(vector: Float32Array): number {
  return Math.hypot(...vector);
}

describe('OpenAIEmbedder', () => {
  it('returns one unit vector per text, in order, pointing where the provider said', async () => {
    const vectors = await embedder.embed(texts);

    expect(vectors).toHaveLength(3);
    vectors.forEach((vector, index) => {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector).toHaveLength(DIMENSIONS);
      expect(norm(vector)).toBeCloseTo(1, 5);
      const expected = normalised(fakeVector(texts[index] ?? '', DIMENSIONS));
      expect(Array.from(vector)).toEqual(Array.from(expected ?? []));
    });
    expect(embedder).toMatchObject({ model: 'text-embedding-3-small', dimensions: DIMENSIONS });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-embed');
    expect(fake.requests[0]?.body).toEqual({ model: 'text-embedding-3-small', input: texts, encoding_format: 'float' });
  });

  it('asks for the dimension only when configured to', async () => {
    const shortened = new OpenAIEmbedder({ baseURL: fake.baseURL, apiKey: 'k', model: 'text-embedding-3-large', dimensions: 16, requestDimensions: true });
    const [vector] = await shortened.embed(['hello']);
    expect(vector).toHaveLength(16);
    expect(fake.requests[0]?.body).toMatchObject({ dimensions: 16 });
  });

  it('places vectors by their index when the answer is out of order', async () => {
    fake.embeddings({ kind: 'answer', reversed: true });
    const vectors = await embedder.embed(texts);
    expect(Array.from(vectors[0] ?? [])).toEqual(Array.from(normalised(fakeVector(texts[0] ?? '', DIMENSIONS)) ?? []));
    expect(Array.from(vectors[2] ?? [])).toEqual(Array.from(normalised(fakeVector(texts[2] ?? '', DIMENSIONS)) ?? []));
  });

  it('sends large inputs in batches and keeps the order', async () => {
    const batched = new OpenAIEmbedder({ baseURL: fake.baseURL, apiKey: 'k', model: 'm', dimensions: DIMENSIONS, batchSize: 2 });
    const many = ['a', 'b', 'c', 'd', 'e'];
    const vectors = await batched.embed(many);
    expect(fake.requests.map((request) => (request.body as { input: string[] }).input)).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
    expect(vectors.map((vector) => Array.from(vector))).toEqual(many.map((text) => Array.from(normalised(fakeVector(text, DIMENSIONS)) ?? [])));
  });

  it('answers an empty list without calling the provider', async () => {
    await expect(embedder.embed([])).resolves.toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });

  it('answers upstream_error when the provider returns too few vectors', async () => {
    fake.embeddings({ kind: 'answer', count: 2 });
    const error = await expectError(embedder.embed(texts), 'upstream_error');
    expect(error.message).toBe('The embedding provider sent an answer that could not be understood: embeddings: 2 vectors for 3 texts');
  });

  it('answers upstream_error for vectors of the wrong dimension', async () => {
    fake.embeddings({ kind: 'answer', dimensions: 4 });
    const error = await expectError(embedder.embed(texts), 'upstream_error');
    expect(error.message).toContain('a vector of 4 dimensions, expected 8');
  });

  it.each([
    ['a null number', [1, null, 0, 0, 0, 0, 0, 0]],
    ['a string number', [1, '2', 0, 0, 0, 0, 0, 0]],
    ['all zeros', [0, 0, 0, 0, 0, 0, 0, 0]],
    ['no array at all', 'AAAA'],
  ])('answers upstream_error for a vector with %s', async (_label, vector) => {
    fake.embeddings({ kind: 'answer', vectors: [vector] });
    await expectError(embedder.embed(['one text']), 'upstream_error');
  });

  it('answers upstream_error for an HTTP error', async () => {
    fake.embeddings({ kind: 'error', status: 400, message: "'$.input' is invalid." });
    const error = await expectError(embedder.embed(texts), 'upstream_error');
    expect(error.message).toBe("The embedding provider answered HTTP 400: '$.input' is invalid.");
  });

  it('answers upstream_error for an answer that is not JSON', async () => {
    fake.embeddings({ kind: 'garbage' });
    await expectError(embedder.embed(texts), 'upstream_error');
  });

  it('answers upstream_error within the time-out when the provider never answers', async () => {
    fake.embeddings({ kind: 'stall' });
    const started = performance.now();
    const error = await expectError(embedder.embed(texts), 'upstream_error');
    expect(error.message).toBe(`The embedding provider did not answer within ${TIMEOUT_MS} ms.`);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);
    await vi.waitFor(() => expect(fake.requests[0]?.aborted).toBe(true));
  });

  it('answers upstream_error when the provider cannot be reached', async () => {
    const unreachable = new OpenAIEmbedder({ baseURL: await refusedBaseURL(), apiKey: 'k', model: 'm', dimensions: DIMENSIONS });
    const error = await expectError(unreachable.embed(texts), 'upstream_error');
    expect(error.message).toBe('The embedding provider could not be reached (ECONNREFUSED).');
  });

  it('rejects with the reason when the caller aborts', async () => {
    fake.embeddings({ kind: 'stall' });
    const controller = new AbortController();
    const pending = embedder.embed(texts, controller.signal);
    await vi.waitFor(() => expect(fake.requests).toHaveLength(1));
    controller.abort(new Error('gone'));
    await expect(pending).rejects.toThrow('gone');
  });

  it('refuses a nonsensical dimension at construction', () => {
    expect(() => new OpenAIEmbedder({ baseURL: fake.baseURL, model: 'm', dimensions: 0 })).toThrow(RangeError);
  });
});
