import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** Identifier prefixes of decisions §1: `<prefix>_<ULID>`. */
export const ID_PREFIXES = {
  user: 'usr',
  tenant: 'tnt',
  apiKey: 'key',
  workflow: 'wf',
  execution: 'exe',
  webhook: 'wh',
  delivery: 'dlv',
  event: 'evt',
  agent: 'agt',
  message: 'msg',
  memoryItem: 'mem',
  document: 'doc',
  session: 'ses',
  tool: 'tool',
  toolCall: 'call',
  run: 'run',
  dataset: 'ds',
  datasetItem: 'dsi',
  eval: 'eval',
  // Not exposed in the spec's catalogue but still opaque, prefixed identifiers.
  refreshToken: 'rtk',
  transaction: 'txn',
  purchase: 'pur',
  signingKey: 'sgk',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

/** Random bytes drawn from the system's CSPRNG this many at a time. */
const RANDOM_POOL_BYTES = 4096;
const randomPool = new Uint8Array(RANDOM_POOL_BYTES);
let randomAt = RANDOM_POOL_BYTES;

/**
 * ulid's default source asks the CSPRNG for one byte per character, sixteen calls for each id made
 * in a new millisecond: a share of every write. The same bytes, fetched a pool at a time.
 */
export function pooledRandom(): number {
  if (randomAt === RANDOM_POOL_BYTES) {
    randomFillSync(randomPool);
    randomAt = 0;
  }
  return randomPool[randomAt++]! / 256;
}

const nextUlid = monotonicFactory(pooledRandom);
const ULID_PATTERN = '[0-9A-HJKMNP-TV-Z]{26}';

export function newId(kind: IdKind): string {
  return `${ID_PREFIXES[kind]}_${nextUlid()}`;
}

const patterns = new Map<IdKind, RegExp>();

/** True when `value` is a well-formed id of that kind (not that such a thing exists). */
export function isId(kind: IdKind, value: string): boolean {
  let pattern = patterns.get(kind);
  if (!pattern) {
    pattern = new RegExp(`^${ID_PREFIXES[kind]}_${ULID_PATTERN}$`);
    patterns.set(kind, pattern);
  }
  return pattern.test(value);
}
