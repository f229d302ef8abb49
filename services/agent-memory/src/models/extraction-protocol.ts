/**
 * What memory extraction (decisions §14) asks of a model: two questions, each answered with one
 * JSON document of a fixed schema. The OpenAI adapter sends the schema as `response_format`; the
 * offline model answers both by the rule of §14. Ids of existing items are never shown to a
 * model: each is replaced by its position in the question ("0", "1", …), which a model copies
 * back far more reliably than an opaque id, and an id it invents is then easy to refuse.
 */

/** A JSON answer a request asks for: the schema is strict (every key required, no others). */
export interface ResponseFormat {
  name: string;
  schema: Record<string, unknown>;
}

/** The first question's input (the user message's content is this, as JSON): one turn. */
export interface FactsQuestion {
  user: string;
  assistant: string;
}

export interface FactsAnswer {
  facts: string[];
}

export const FACTS_FORMAT: ResponseFormat = {
  name: 'memory_facts',
  schema: {
    type: 'object',
    properties: { facts: { type: 'array', items: { type: 'string' }, description: 'Each fact one short sentence in the first person of the user.' } },
    required: ['facts'],
    additionalProperties: false,
  },
};

export const FACTS_INSTRUCTIONS = [
  'You keep the long-term memory of an assistant. The user message is one turn of a conversation as JSON: what the user said and what the assistant answered.',
  'List the durable facts the user stated about themselves: identity, whereabouts, preferences, plans, relationships, decisions. One short sentence each, in the words of the user.',
  'Leave out questions, small talk, what the assistant said, and anything true only for this moment. No facts: an empty list.',
].join('\n');

/** One existing item near a fact, as the second question shows it. */
export interface NearItem {
  /** Its position among the question's items, as text ("0", "1", …). */
  id: string;
  text: string;
  /** Cosine similarity of the fact and the item, [-1, 1]. */
  score: number;
}

/** The second question's input (the user message's content, as JSON). */
export interface DecisionsQuestion {
  facts: { fact: string; nearest: NearItem[] }[];
}

export type MemoryEvent = 'ADD' | 'UPDATE' | 'DELETE' | 'NONE';

export interface Decision {
  event: MemoryEvent;
  /** The item UPDATE and DELETE act on (one of the question's ids); null for ADD and NONE. */
  id: string | null;
  /** The item's text after ADD or UPDATE. */
  text: string;
}

export interface DecisionsAnswer {
  decisions: Decision[];
}

export const DECISIONS_FORMAT: ResponseFormat = {
  name: 'memory_decisions',
  schema: {
    type: 'object',
    properties: {
      decisions: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            event: { type: 'string', enum: ['ADD', 'UPDATE', 'DELETE', 'NONE'] },
            id: { type: ['string', 'null'], description: 'For UPDATE and DELETE: the id of an existing item from the question; else null.' },
            text: { type: 'string', description: 'For ADD and UPDATE: the memory as it should now read; else empty.' },
          },
          required: ['event', 'id', 'text'],
          additionalProperties: false,
        },
      },
    },
    required: ['decisions'],
    additionalProperties: false,
  },
};

export const DECISIONS_INSTRUCTIONS = [
  'You keep the long-term memory of an assistant. The user message is JSON: new facts, each with the existing memories nearest to it (id, text, similarity score).',
  'For each fact decide one event: ADD it as a new memory; UPDATE an existing memory it refines or supersedes (give that id and the merged text); DELETE an existing memory it contradicts and makes worthless (give that id); or NONE when it is already known.',
  'Only use ids given in the question. Answer with one decision per fact, in order.',
].join('\n');

/** The offline model's rule (decisions §14): a fact this close to its nearest item updates it. */
export const OFFLINE_UPDATE_SCORE = 0.9;

/** Sentences of `text` that speak of the user (I, my, me) and are not questions: the offline model's facts. */
export function offlineFacts(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0 && !sentence.endsWith('?') && /\b(i|my|me)\b/i.test(sentence));
}

/** The offline model's decisions: UPDATE the nearest item when it scores ≥ 0.9, else ADD. */
export function offlineDecisions(question: DecisionsQuestion): DecisionsAnswer {
  return {
    decisions: question.facts.map(({ fact, nearest }) => {
      const best = nearest.reduce<NearItem | undefined>((top, item) => (top === undefined || item.score > top.score ? item : top), undefined);
      return best !== undefined && best.score >= OFFLINE_UPDATE_SCORE ? { event: 'UPDATE', id: best.id, text: fact } : { event: 'ADD', id: null, text: fact };
    }),
  };
}
