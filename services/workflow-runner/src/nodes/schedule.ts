import { Cron } from 'croner';
import { fieldPath, onlyKeys, readString } from '../workflows/graph-fields.js';
import { passInput, type NodeKind } from './node-kind.js';

export interface ScheduleConfig {
  /** 5 fields, or 6 with leading seconds. */
  cron: string;
  /** An IANA name. */
  timezone: string;
}

const MAX_CRON = 200;
const DEFAULT_TIMEZONE = 'UTC';

export const scheduleNode: NodeKind<ScheduleConfig, false> = {
  summary: 'trigger: a cron tick',
  configHelp: '{cron: 5 fields or 6 with seconds first, timezone?: IANA name, default UTC}',
  trigger: true,
  check(config, ctx) {
    onlyKeys(config, ['cron', 'timezone'], ctx, "a schedule node's config");
    const cron = readString(config, 'cron', ctx, { required: true, max: MAX_CRON }) ?? '';
    let timezone = readString(config, 'timezone', ctx, { required: false, max: 100 }) ?? DEFAULT_TIMEZONE;
    if (!isTimeZone(timezone)) {
      ctx.errors.add(fieldPath(ctx, 'timezone'), 'must be an IANA time zone name, e.g. Europe/Berlin');
      timezone = DEFAULT_TIMEZONE;
    }
    if (cron !== '') {
      const problem = cronProblem(cron, timezone);
      if (problem) ctx.errors.add(fieldPath(ctx, 'cron'), problem);
    }
    return { cron, timezone };
  },
  hasSideEffects: () => false,
  behaviour: passInput,
};

function isTimeZone(name: string): boolean {
  if (name === '' || /^[+-]/.test(name)) return false; // Intl also takes `+02:00`, which is no IANA name
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Parsed by croner as the scheduler will: 5 fields, or 6 with leading seconds. */
function cronProblem(cron: string, timezone: string): string | undefined {
  let job: Cron | undefined;
  try {
    job = new Cron(cron, { paused: true, mode: '5-or-6-parts', timezone });
    return job.nextRun() === null ? 'must fire at some time (this expression never does)' : undefined;
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, '') : String(error);
    return `must be a cron expression of 5 fields (or 6 with leading seconds): ${message}`;
  } finally {
    job?.stop();
  }
}
