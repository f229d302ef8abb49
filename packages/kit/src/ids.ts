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
  // Not exposed in the spec's catalogue but still opaque, prefixed identifiers.
  refreshToken: 'rtk',
  transaction: 'txn',
  purchase: 'pur',
  signingKey: 'sgk',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

const nextUlid = monotonicFactory();
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
