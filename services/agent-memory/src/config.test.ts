import { ConfigError } from '@agent-platform/kit';
import { describe, expect, it } from 'vitest';
import { loadAgentMemoryConfig } from './config.js';

const key = Buffer.alloc(32, 7).toString('base64');
const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/agents', TOOL_SECRET_KEY: key };

function problems(environment: Record<string, string>, requireNats = false): string {
  try {
    loadAgentMemoryConfig(environment, { requireNats });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('loadAgentMemoryConfig', () => {
  it('defaults to the built-in model, embedder and embedded index', () => {
    expect(loadAgentMemoryConfig(base)).toMatchObject({
      grpcPort: 50052,
      identityAddr: '127.0.0.1:50051',
      workflowRunnerAddr: '127.0.0.1:50053',
      allowPrivateNetworkUrls: false,
      llm: undefined,
      embedding: undefined,
      qdrant: undefined,
      vectorIndexDir: undefined,
      llmTimeoutMs: 60_000,
      chatHistoryMessages: 20,
      chatMemoryResults: 5,
      consolidationIntervalSeconds: 0,
      toolTimeoutMs: 30_000,
    });
  });

  it('bounds tool calls by TOOL_TIMEOUT_MS, a positive whole number of ms', () => {
    expect(loadAgentMemoryConfig({ ...base, TOOL_TIMEOUT_MS: '5000' }).toolTimeoutMs).toBe(5_000);
    for (const bad of ['0', '-1', '1.5', 'soon']) expect(problems({ ...base, TOOL_TIMEOUT_MS: bad })).toMatch(/^ {2}TOOL_TIMEOUT_MS: /m);
  });

  it('selects the OpenAI-compatible servers and Qdrant when named', () => {
    const config = loadAgentMemoryConfig({
      ...base,
      LLM_BASE_URL: 'http://localhost:11434/v1',
      LLM_MODEL: 'llama3.2',
      EMBEDDING_BASE_URL: 'https://api.openai.com/v1',
      EMBEDDING_API_KEY: 'sk-test',
      EMBEDDING_MODEL: 'text-embedding-3-small',
      EMBEDDING_DIMENSIONS: '1536',
      QDRANT_URL: 'http://qdrant:6333',
    });
    expect(config.llm).toEqual({ baseUrl: 'http://localhost:11434/v1', apiKey: undefined, model: 'llama3.2', maxTokensField: 'max_tokens' });
    expect(config.embedding).toEqual({ baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-test', model: 'text-embedding-3-small', dimensions: 1536 });
    expect(config.qdrant).toEqual({ url: 'http://qdrant:6333', apiKey: undefined });
  });

  it('names every bad variable on its own line', () => {
    const message = problems({ ...base, LLM_BASE_URL: 'ftp://x', LLM_TIMEOUT_MS: 'soon', QDRANT_URL: 'qdrant', IDENTITY_ADDR: 'nowhere' });
    for (const variable of ['LLM_BASE_URL', 'LLM_TIMEOUT_MS', 'QDRANT_URL', 'IDENTITY_ADDR']) {
      expect(message).toMatch(new RegExp(`^  ${variable}: `, 'm'));
    }
    const incomplete = problems({ ...base, EMBEDDING_BASE_URL: 'http://e/v1' });
    expect(incomplete).toMatch(/^ {2}EMBEDDING_MODEL: /m);
    expect(incomplete).toMatch(/^ {2}EMBEDDING_DIMENSIONS: /m);
    expect(problems({ ...base, LLM_BASE_URL: 'http://llm/v1' })).toMatch(/^ {2}LLM_MODEL: is required with LLM_BASE_URL$/m);
    expect(problems(base, true)).toMatch(/^ {2}NATS_URL: /m);
  });

  it('outside the all-in-one mode, refuses the offline model and the offline embedder unless ALLOW_OFFLINE_MODEL=true (decisions §18)', () => {
    const distributed = { ...base, NATS_URL: 'nats://nats:4222' };
    const refused = problems(distributed, true);
    expect(refused).toMatch(/^ {2}LLM_BASE_URL: is required outside the all-in-one mode: without it every tenant is answered by the built-in offline model; set ALLOW_OFFLINE_MODEL=true to run on it anyway$/m);
    expect(refused).toMatch(/^ {2}EMBEDDING_BASE_URL: is required outside the all-in-one mode/m);
    const withModel = { ...distributed, LLM_BASE_URL: 'http://llm/v1', LLM_MODEL: 'm' };
    expect(problems(withModel, true)).toMatch(/^ {2}EMBEDDING_BASE_URL: /m);
    expect(problems(withModel, true)).not.toMatch(/LLM_BASE_URL/);
    expect(() => loadAgentMemoryConfig({ ...withModel, EMBEDDING_BASE_URL: 'http://e/v1', EMBEDDING_MODEL: 'e', EMBEDDING_DIMENSIONS: '8' }, { requireNats: true })).not.toThrow();
    expect(() => loadAgentMemoryConfig({ ...distributed, ALLOW_OFFLINE_MODEL: 'true' }, { requireNats: true })).not.toThrow();
    // The all-in-one launcher runs on the offline model without being told.
    expect(() => loadAgentMemoryConfig(base)).not.toThrow();
  });

  it('needs the key that seals tools\' header values, 32 bytes of base64', () => {
    const { TOOL_SECRET_KEY: _omitted, ...withoutKey } = base;
    expect(problems(withoutKey)).toMatch(/^ {2}TOOL_SECRET_KEY: is required/m);
    expect(problems({ ...base, TOOL_SECRET_KEY: Buffer.alloc(16).toString('base64') })).toMatch(/^ {2}TOOL_SECRET_KEY: must be the base64 of exactly 32 bytes/m);
    expect(loadAgentMemoryConfig(base).toolSecretKey.equals(Buffer.from(key, 'base64'))).toBe(true);
    expect(problems({ ...base, WORKFLOW_RUNNER_ADDR: 'runner', ALLOW_PRIVATE_NETWORK_URLS: 'maybe' })).toMatch(/WORKFLOW_RUNNER_ADDR[\s\S]*ALLOW_PRIVATE_NETWORK_URLS|ALLOW_PRIVATE_NETWORK_URLS[\s\S]*WORKFLOW_RUNNER_ADDR/);
  });
});
