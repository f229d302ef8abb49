import { backoffDelay, newId, type Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { AgentsRepository } from '../agents/agents.repository.js';
import { extractsMemory } from '../agents/agents.service.js';
import { chargeServed, turnCost, type Credits } from '../chat/credits.js';
import type { ChatModel, ChatRequest, Usage } from '../models/chat-model.js';
import { cosine, type Embedder } from '../models/embedder.js';
import {
  DECISIONS_FORMAT,
  DECISIONS_INSTRUCTIONS,
  FACTS_FORMAT,
  FACTS_INSTRUCTIONS,
  type DecisionsAnswer,
  type DecisionsQuestion,
  type FactsAnswer,
  type FactsQuestion,
  type ResponseFormat,
} from '../models/extraction-protocol.js';
import { firstJsonObject } from '../models/offline-chat-model.js';
import { sumUsage } from '../models/usage.js';
import type { VectorStore } from '../vectors/vector-store.js';
import type { ClaimedExtraction, ExtractionCounts, ExtractionRepository } from './extraction.repository.js';
import { CONTENT_MAX } from './memory-input.js';
import type { Candidate, ChangeSource, NewMemoryItem } from './memory-items.js';
import type { MemoryRepository } from './memory.repository.js';
import type { MemoryService } from './memory.service.js';
import { extractionStep } from '../runs/run-steps.js';
import type { RunsRepository } from '../runs/runs.repository.js';

export interface ExtractionServiceOptions {
  em: EntityManager;
  agents: AgentsRepository;
  memory: MemoryRepository;
  /** Index writes and removals, as every other change of memory makes them. */
  memoryService: MemoryService;
  queue: ExtractionRepository;
  /** Where the turn's run records the extraction as a step. */
  runs: Pick<RunsRepository, 'append'>;
  embedder: Embedder;
  vectors: VectorStore;
  model: ChatModel;
  credits: Credits;
  /** Attempts of one job before it is left failed. */
  maxAttempts: number;
  /** Back-off after the first failed attempt, doubling after each. */
  retryInitialMs: number;
  logger: Logger;
}

// A turn yields a handful of facts; more is a model that lost the thread.
const FACTS_MAX = 20;
const DECISIONS_MAX = 2 * FACTS_MAX;
// Existing items shown to the model beside each fact.
const NEAREST_PER_FACT = 5;
// An owner with at most this many items is compared exactly; beyond it the index over-fetches.
const EXACT_COMPARE_MAX = 5_000;
const INDEX_OVERFETCH = 200;
const RETRY_MAX_MS = 5 * 60_000;

/** The model's answer could not be used: not JSON, not of the schema, or naming ids it was not given. */
class InvalidAnswer extends Error {}
/** Another worker finished the job first (this one's lease ran out): this attempt's changes are dropped. */
class Superseded extends Error {}

function validator(format: ResponseFormat): ValidateFunction {
  return new Ajv2020({ strict: false, logger: false, allErrors: true }).compile(format.schema);
}
const validFacts = validator(FACTS_FORMAT);
const validDecisions = validator(DECISIONS_FORMAT);

/** The planned changes, ids resolved, texts embedded: what one transaction applies. */
interface Plan {
  add: NewMemoryItem[];
  update: { item: Candidate; content: string; embedding: Float32Array }[];
  remove: Candidate[];
}

/**
 * Extraction (decisions §14): from one finished turn, the model lists the facts the user stated;
 * each is compared with the owner's nearest items and the model decides ADD, UPDATE, DELETE or
 * NONE. The decisions, their history entries, `memory.updated` and the job's outcome are written
 * in one transaction guarded on the job's lease, so however often a job runs (a crash, an expired
 * lease), its changes happen once. What is compared and changed is the owner's own semantic items
 * (the end user's, or with none the shared ones), never a document's chunks.
 */
export class ExtractionService {
  constructor(private readonly options: ExtractionServiceOptions) {}

  /** Runs one claimed job to its outcome: done, due again after a back-off, or failed for good. */
  async process(job: ClaimedExtraction, signal: AbortSignal): Promise<void> {
    const { queue, logger } = this.options;
    const log = logger.child({ message_id: job.messageId, agent_id: job.agentId, attempt: job.attempt });
    let outcome: { counts: ExtractionCounts; credits: number };
    try {
      outcome = await this.extract(job, signal);
    } catch (error) {
      if (error instanceof Superseded) return;
      // Stopping: the lease expires and another replica (or this one, restarted) takes it up.
      if (signal.aborted) return;
      const retryInMs = job.attempt < this.options.maxAttempts ? backoffDelay(job.attempt, { initialMs: this.options.retryInitialMs, maxMs: RETRY_MAX_MS }) : undefined;
      const reason = error instanceof Error ? error.message : String(error);
      if (retryInMs === undefined) log.error({ err: error }, 'memory extraction failed for good; the turn stays unextracted');
      else log.warn({ err: error, retry_in_ms: retryInMs }, 'memory extraction failed; retrying');
      await queue.fail(job, reason, retryInMs);
      return;
    }
    if (outcome.credits > 0) await this.charge(job, outcome.credits, log);
  }

  private async extract(job: ClaimedExtraction, signal: AbortSignal): Promise<{ counts: ExtractionCounts; credits: number }> {
    const { agents, em, queue } = this.options;
    const none = { added: 0, updated: 0, deleted: 0 };
    const agent = await agents.find(job.tenantId, job.agentId);
    const turn = agent && extractsMemory(agent, job.userId ?? undefined) ? await this.turnOf(job) : undefined;
    if (!agent || !turn) {
      // Nothing to extract from any more (extraction turned off, the turn deleted with its session).
      const completed = await em.transactional(async () => {
        if (!(await queue.complete(job, none, 0))) return false;
        await this.recordStep(job, none);
        return true;
      });
      if (!completed) throw new Superseded();
      return { counts: none, credits: 0 };
    }
    const request: Omit<ChatRequest, 'messages' | 'responseFormat'> = { ...(agent.config.model === undefined ? {} : { model: agent.config.model }), temperature: 0, signal };
    let usage: Usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    const ask = async <T>(instructions: string, question: unknown, format: ResponseFormat, valid: ValidateFunction): Promise<T> => {
      const completion = await this.options.model.complete({
        ...request,
        messages: [
          { role: 'system', content: instructions },
          { role: 'user', content: JSON.stringify(question) },
        ],
        responseFormat: format,
      });
      usage = sumUsage(usage, completion.usage);
      return parseAnswer<T>(completion.content, valid, format.name);
    };

    const factsQuestion: FactsQuestion = turn;
    const facts = [...new Set((await ask<FactsAnswer>(FACTS_INSTRUCTIONS, factsQuestion, FACTS_FORMAT, validFacts)).facts.map((fact) => fact.trim()))]
      .filter((fact) => fact.length > 0)
      .slice(0, FACTS_MAX)
      .map((fact) => fact.slice(0, CONTENT_MAX));
    let plan: Plan = { add: [], update: [], remove: [] };
    if (facts.length > 0) {
      const { question, shown } = await this.decisionsQuestion(job, facts);
      const answer = await ask<DecisionsAnswer>(DECISIONS_INSTRUCTIONS, question, DECISIONS_FORMAT, validDecisions);
      plan = await this.plan(job, answer, shown);
    }
    const credits = usage.totalTokens > 0 ? turnCost(usage.totalTokens) : 0;
    const counts = await this.apply(job, plan, credits);
    return { counts, credits };
  }

  /** The turn's user message and the answer, or undefined when they are gone. */
  private async turnOf(job: ClaimedExtraction): Promise<FactsQuestion | undefined> {
    const rows = await this.options.em.execute<{ role: string; content: string }[]>(
      `select "role", "content" from (
         (select "role", "content", "seq" from "chat_messages" where "id" = ? and "session_id" = ?)
         union all
         (select u."role", u."content", u."seq" from "chat_messages" u
            where u."session_id" = ? and u."role" = 'user' and u."seq" < (select "seq" from "chat_messages" where "id" = ?)
            order by u."seq" desc limit 1)
       ) as "turn" order by "seq"`,
      [job.messageId, job.sessionId, job.sessionId, job.messageId],
      'all',
    );
    const user = rows.find((row) => row.role === 'user');
    const answer = rows.find((row) => row.role === 'assistant');
    return user && answer ? { user: user.content, assistant: answer.content } : undefined;
  }

  /** Each fact with the owner's nearest items; items get question ids ("0", "1", …) in order of first showing. */
  private async decisionsQuestion(job: ClaimedExtraction, facts: readonly string[]): Promise<{ question: DecisionsQuestion; shown: Candidate[] }> {
    const embeddings = await this.options.embedder.embed(facts);
    const comparable = await this.comparable(job, embeddings);
    const shown: Candidate[] = [];
    const idOf = new Map<string, string>();
    const question: DecisionsQuestion = {
      facts: facts.map((fact, index) => {
        const vector = embeddings[index]!;
        const nearest = comparable
          .map((item) => ({ item, score: cosine(vector, item.embedding) }))
          .sort((a, b) => b.score - a.score)
          .slice(0, NEAREST_PER_FACT)
          .map(({ item, score }) => {
            let id = idOf.get(item.id);
            if (id === undefined) {
              id = String(shown.length);
              idOf.set(item.id, id);
              shown.push(item);
            }
            return { id, text: item.content, score: Math.round(score * 1000) / 1000 };
          });
        return { fact, nearest };
      }),
    };
    return { question, shown };
  }

  /** The owner's extractable items near the facts: all of them when few, else the index's nearest. */
  private async comparable(job: ClaimedExtraction, embeddings: readonly Float32Array[]): Promise<Candidate[]> {
    const { memory, vectors, embedder } = this.options;
    const owner = { tenantId: job.tenantId, agentId: job.agentId, userId: job.userId, embeddingModel: embedder.model };
    const all = await memory.extractable(owner, undefined, EXACT_COMPARE_MAX);
    if (all !== undefined) return all;
    const hits = await Promise.all(
      embeddings.map((vector) =>
        vectors.search({ tenantId: job.tenantId, agentId: job.agentId, vector, limit: INDEX_OVERFETCH, memoryTypes: ['semantic'], audience: { userId: job.userId } }),
      ),
    );
    return (await memory.extractable(owner, [...new Set(hits.flat().map((hit) => hit.id))])) ?? [];
  }

  /** The decisions as changes; an id the question did not show makes the whole answer invalid. */
  private async plan(job: ClaimedExtraction, answer: DecisionsAnswer, shown: readonly Candidate[]): Promise<Plan> {
    const decisions = answer.decisions.slice(0, DECISIONS_MAX);
    const target = (id: string | null): Candidate => {
      const item = id === null || !/^\d+$/.test(id) ? undefined : shown[Number(id)];
      if (!item) throw new InvalidAnswer(`the model named memory ${JSON.stringify(id)}, which it was not shown`);
      return item;
    };
    const writes: { text: string; item: Candidate | undefined }[] = [];
    const remove = new Map<string, Candidate>();
    for (const decision of decisions) {
      const text = decision.text.trim().slice(0, CONTENT_MAX);
      if (decision.event === 'ADD' && text.length > 0) writes.push({ text, item: undefined });
      else if (decision.event === 'UPDATE' && text.length > 0) writes.push({ text, item: target(decision.id) });
      else if (decision.event === 'DELETE') {
        const item = target(decision.id);
        remove.set(item.id, item);
      }
    }
    const live = writes.filter((write) => !(write.item && remove.has(write.item.id)));
    const embeddings = live.length === 0 ? [] : await this.options.embedder.embed(live.map((write) => write.text));
    const now = new Date();
    const plan: Plan = { add: [], update: [], remove: [...remove.values()] };
    live.forEach((write, index) => {
      const embedding = embeddings[index]!;
      if (write.item) plan.update.push({ item: write.item, content: write.text, embedding });
      else {
        plan.add.push({
          id: newId('memoryItem'),
          tenantId: job.tenantId,
          agentId: job.agentId,
          documentId: null,
          userId: job.userId,
          memoryType: 'semantic',
          content: write.text,
          metadata: { source: 'extraction', session_id: job.sessionId },
          embedding,
          embeddingModel: this.options.embedder.model,
          createdAt: now,
        });
      }
    });
    return plan;
  }

  /**
   * One transaction: the changes with their history, `memory.updated`, the job's outcome. The
   * index takes the new vectors inside it (an index that refuses them rolls everything back, to be
   * retried); vectors of deleted items leave it after the commit.
   */
  private async apply(job: ClaimedExtraction, plan: Plan, credits: number): Promise<ExtractionCounts> {
    const { em, memory, memoryService, queue, embedder } = this.options;
    const change: ChangeSource = { source: 'extraction', sessionId: job.sessionId };
    const now = new Date();
    const counts = await em.transactional(async (tx) => {
      let updated = 0;
      let deleted = 0;
      await memory.insert(plan.add, change);
      for (const { item, content, embedding } of plan.update) {
        if (await memory.update(job.tenantId, item.id, { content, embedding, embeddingModel: embedder.model }, change, now)) updated += 1;
      }
      for (const item of plan.remove) if ((await memory.deleteItem(job.tenantId, item.id, change, now)) !== undefined) deleted += 1;
      const result = { added: plan.add.length, updated, deleted };
      if (!(await queue.complete(job, result, credits))) throw new Superseded();
      await this.recordStep(job, result);
      if (result.added + result.updated + result.deleted > 0) {
        await recordEvent(
          tx,
          newEvent('memory.updated', job.tenantId, { agent_id: job.agentId, session_id: job.sessionId, user_id: job.userId, ...result }, now),
        );
      }
      await memoryService.index([
        ...plan.add,
        ...plan.update.map(({ item, embedding }) => ({ id: item.id, tenantId: job.tenantId, agentId: job.agentId, memoryType: item.memoryType, userId: item.userId, embedding })),
      ]);
      return result;
    });
    await memoryService.forgetVectors(plan.remove.map((item) => item.id));
    return counts;
  }

  /** In the job's transaction: the extraction as the last step of the turn's run. */
  private async recordStep(job: ClaimedExtraction, counts: ExtractionCounts): Promise<void> {
    if (job.runId !== null) await this.options.runs.append(job.runId, [extractionStep(counts, job.claimedAt, new Date())]);
  }

  /** Charged like a chat round, idempotently on the job. */
  private async charge(job: ClaimedExtraction, credits: number, log: Logger): Promise<void> {
    await chargeServed(this.options.credits, {
      actor: job.actor,
      charge: { amount: credits, reference: `extraction-${job.messageId}`, description: `Memory extraction for agent ${job.agentId}` },
      requestId: undefined,
      markCharged: () => this.options.queue.markCharged(job.messageId),
      log,
      what: 'memory extraction',
    });
  }
}

/** The model's text as the schema's document: strict JSON first, else the first JSON object in it (fenced, say). */
function parseAnswer<T>(content: string, valid: ValidateFunction, name: string): T {
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    value = firstJsonObject(content);
  }
  if (value === undefined) throw new InvalidAnswer(`the model's ${name} answer is not JSON`);
  if (!valid(value)) throw new InvalidAnswer(`the model's ${name} answer does not match its schema: ${valid.errors?.map((error) => `${error.instancePath || '/'} ${error.message ?? ''}`).join('; ')}`);
  return value as T;
}

