import type { Clock } from '@agent-platform/kit';
import OpenAI from 'openai';
import type { z } from 'zod';
import { MalformedAnswer } from './upstream.js';

/** decisions §6: LLM_TIMEOUT_MS defaults to 60 s. */
export const DEFAULT_TIMEOUT_MS = 60_000;

export interface OpenAICompatibleOptions {
  /** e.g. https://api.openai.com/v1, http://localhost:11434/v1 (Ollama), http://vllm:8000/v1 */
  baseURL: string;
  /** Local servers (Ollama, llama.cpp) take none; a placeholder is sent because the SDK insists. */
  apiKey?: string;
  /** Bound on each call, and on each silence within a streamed answer. Milliseconds. */
  timeoutMs?: number;
  /**
   * Measures that bound; default the system's. The SDK's own `timeout` (until the answer's
   * headers arrive) runs in real time whatever it is.
   */
  clock?: Clock;
}

/**
 * A client configured only from what it is given. Every option the SDK would otherwise read from
 * `process.env` (OPENAI_ORG_ID, OPENAI_PROJECT_ID…) is pinned: config is parsed once, elsewhere.
 *
 * `maxRetries: 0`: a retried chat completion may be generated, and billed by the provider, twice,
 * and the SDK's back-off (up to 60 s when a 429 says so) would stretch a call far past its
 * time-out. A failure is answered at once as upstream_error; the caller decides whether to retry.
 */
export function openAIClient(options: OpenAICompatibleOptions): OpenAI {
  return new OpenAI({
    baseURL: options.baseURL,
    apiKey: options.apiKey !== undefined && options.apiKey.length > 0 ? options.apiKey : 'no-key',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxRetries: 0,
    // The SDK would print malformed stream chunks to the console; we report them as errors.
    logLevel: 'off',
  });
}

/** `value` checked against `schema`; a mismatch is a MalformedAnswer naming the first problem. */
export function parseAnswer<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  throw new MalformedAnswer(`${what}${where}: ${issue?.message ?? 'unexpected shape'}`);
}
