import { seededRandom } from '@agent-platform/kit/testing';
import { TOPICS, type Topic } from './topics.js';

/** Just under the 1,000,000-character limit of a document. */
const DOCUMENT_CHARS = 990_000;
/** The subjects a document is mostly about; the rest of its paragraphs stray to any subject. */
const OWN_TOPICS = 3;
const STRAY_SHARE = 0.2;
/** Sentences per paragraph: between these two. */
const PARAGRAPH_SENTENCES = { min: 4, max: 10 };

interface Words {
  noun(): string;
  verb(): string;
  adjective(): string;
  /** When, in words any subject's prose uses. */
  when(): string;
}

const WHEN = ['on Monday', 'last week', 'this year', 'in the morning', 'after lunch', 'every day', 'since spring', 'by Friday', 'last month', 'at night', 'twice a year', 'for a while'];

const capitalised = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
const article = (word: string): string => (/^[aeiou]/.test(word) ? `an ${word}` : `a ${word}`);

/** Sentence shapes; `id` is a reference no other sentence holds, for searches by identifier. */
const SENTENCES: readonly ((w: Words, id: string) => string)[] = [
  (w, id) => `The ${w.adjective()} ${w.noun()} of ${id} ${w.verb()} the ${w.noun()} and the ${w.noun()} ${w.when()}.`,
  (w, id) => `In ${id}, ${article(w.adjective())} ${w.noun()} ${w.verb()} every ${w.noun()} before the ${w.noun()}.`,
  (w, id) => `According to ${id}, each ${w.noun()} ${w.verb()} the ${w.adjective()} ${w.noun()} after the ${w.noun()}.`,
  (w, id) => `${id} says that ${w.when()} the ${w.noun()} ${w.verb()} ${article(w.adjective())} ${w.noun()} near the ${w.noun()}.`,
  (w, id) => `Because the ${w.noun()} was ${w.adjective()}, the ${w.noun()} in ${id} ${w.verb()} the ${w.noun()} again.`,
  (w, id) => `Nobody expected that the ${w.adjective()} ${w.noun()} ${w.verb()} the ${w.noun()} and its ${w.noun()} (${id}).`,
  (w, id) => `${capitalised(w.when())}, the ${w.noun()} of ${id} ${w.verb()} the ${w.noun()}: the ${w.noun()} seems ${w.adjective()}.`,
];

/**
 * Document `index` of the benches' corpus: ~990,000 characters of prose in paragraphs, ~1,600
 * chunks of up to 1,000 characters (~820 on average), the same text every run. A paragraph keeps
 * to one subject (topics.ts): mostly one of the document's own three, one in five any other; its
 * sentences draw that subject's words at random, and each names an id of its own
 * (`ref_<index>_<sentence>`). So chunks differ in words and in meaning, near one another within a
 * subject and far across subjects. Mean cosine between chunks of three documents with
 * `hybrid-sg100-v1`: 0.32 (its word-vector part alone 0.33), between this repository's docs/*.md
 * chunks 0.52 (0.68), between the paraphrase set's memories 0.14 (0.21). The corpus before this one
 * repeated one dozen words: 0.89 (1.00), every chunk meaning the same, a crowded space no user's
 * memory is, where an HNSW search visits far more nodes.
 */
export function documentText(index: number): string {
  const random = seededRandom(index + 1);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const own = Array.from({ length: OWN_TOPICS }, () => pick(TOPICS));
  const paragraphs: string[] = [];
  for (let n = 0, length = 0; length < DOCUMENT_CHARS; ) {
    const topic: Topic = random() < STRAY_SHARE ? pick(TOPICS) : pick(own);
    const words: Words = { noun: () => pick(topic.nouns), verb: () => pick(topic.verbs), adjective: () => pick(topic.adjectives), when: () => pick(WHEN) };
    const count = PARAGRAPH_SENTENCES.min + Math.floor(random() * (PARAGRAPH_SENTENCES.max - PARAGRAPH_SENTENCES.min + 1));
    const sentences: string[] = [];
    for (let sentence = 0; sentence < count; sentence += 1, n += 1) sentences.push(pick(SENTENCES)(words, `ref_${index}_${n}`));
    const paragraph = sentences.join(' ');
    paragraphs.push(paragraph);
    length += paragraph.length + 2;
  }
  return paragraphs.join('\n\n');
}
