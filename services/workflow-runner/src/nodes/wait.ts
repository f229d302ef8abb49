import { fieldPath, onlyKeys, readSeconds, readString } from '../workflows/graph-fields.js';
import type { NodeKind } from './node-kind.js';

/** Exactly one of the two: a delay from when the node is reached, or an instant. */
export type WaitConfig = { seconds: number } | { until: string };

/** decisions §13: parks its execution for a while, holding no runner. */
export const waitNode: NodeKind<WaitConfig, true> = {
  summary: 'parks the run for `seconds`, or `until` a time',
  configHelp: '{seconds: 1..2592000} or {until: ISO 8601 time with offset}',
  trigger: false,
  check(config, ctx) {
    onlyKeys(config, ['seconds', 'until'], ctx, "a wait node's config");
    const given = (['seconds', 'until'] as const).filter((key) => config[key] !== undefined && config[key] !== null);
    if (given.length !== 1) {
      ctx.errors.add(ctx.path, given.length === 0 ? 'needs seconds (a delay) or until (an ISO 8601 time)' : 'takes seconds or until, not both');
      return { seconds: 1 };
    }
    if (given[0] === 'seconds') return { seconds: readSeconds(config, 'seconds', ctx) ?? 1 };
    const until = readString(config, 'until', ctx, { required: true, max: 64 });
    if (until !== undefined && !isInstant(until)) ctx.errors.add(fieldPath(ctx, 'until'), 'must be an ISO 8601 time with its offset, e.g. 2026-12-01T09:00:00Z');
    return { until: until ?? '' };
  },
  hasSideEffects: () => false,
  behaviour: {
    waits: true,
    start({ config }, _scope, now) {
      const wakeAt = 'seconds' in config ? new Date(now.getTime() + config.seconds * 1_000) : new Date(config.until);
      // An instant already past completes the node at once.
      if (wakeAt.getTime() <= now.getTime()) return undefined;
      return { wakeAt, output: { until: wakeAt.toISOString() } };
    },
    due: (_config, wakeAt) => ({ until: wakeAt.toISOString() }),
  },
};

// An offset is required: a time without one would mean the runner's zone, which nobody chose.
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;

function isInstant(text: string): boolean {
  const match = INSTANT.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  // Date.parse rolls 02-31 over into March; the calendar day must exist as written.
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}
