import type { Logger } from '@agent-platform/kit';
import type { EntityManager } from '@agent-platform/kit/db';
import { Cron } from 'croner';
import type { ExecutionsService } from '../executions/executions.service.js';
import { Workflow } from '../workflows/workflows.entity.js';

export interface SchedulerOptions {
  em: EntityManager;
  executions: ExecutionsService;
  pollIntervalMs: number;
  logger: Logger;
}

/** Ticks of one workflow handled in one look at most, so a clock jump cannot flood the runner. */
const MAX_TICKS_PER_LOOK = 10;

/**
 * Starts the executions of `schedule` triggers (decisions §7). Every runner looks at the active
 * scheduled workflows each `pollIntervalMs` and starts one execution per tick that came due since
 * its previous look; a tick's row in `schedule_ticks` is inserted with the execution, so however
 * many runners see a tick, one execution starts. Ticks that came due while no runner was looking
 * (none was up) are not replayed, and neither are ticks before the workflow was last changed.
 */
export class Scheduler {
  private readonly options: SchedulerOptions;
  private readonly crons = new Map<string, { key: string; cron: Cron }>();
  private lastLook = new Date();
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> = Promise.resolve();

  constructor(options: SchedulerOptions) {
    this.options = options;
  }

  start(): void {
    this.lastLook = new Date();
    this.timer = setInterval(() => {
      this.looking = this.looking.then(() => this.look());
    }, this.options.pollIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.looking;
  }

  /** One look: every tick due in (previous look, now] of every active scheduled workflow. */
  async look(now = new Date()): Promise<void> {
    const since = this.lastLook;
    try {
      const workflows = await this.options.em.fork().find(Workflow, { status: 'active', scheduleCron: { $ne: null } });
      const seen = new Set<string>();
      for (const workflow of workflows) {
        seen.add(workflow.id);
        const from = workflow.updatedAt > since ? workflow.updatedAt : since;
        for (const tick of this.ticks(workflow, from, now)) {
          const started = await this.options.executions.start(workflow, 'schedule', { scheduled_at: tick.toISOString() }, null, { tick });
          if (started) this.options.logger.debug({ workflow_id: workflow.id, tick: tick.toISOString(), execution_id: started.id }, 'schedule tick started an execution');
        }
      }
      for (const id of this.crons.keys()) if (!seen.has(id)) this.crons.delete(id);
      this.lastLook = now;
    } catch (error) {
      // The window stays open: the next look covers these ticks too.
      this.options.logger.warn({ err: error }, 'checking schedules failed; retrying at the next look');
    }
  }

  private ticks(workflow: Workflow, from: Date, until: Date): Date[] {
    const cron = this.cronOf(workflow);
    if (!cron) return [];
    const ticks: Date[] = [];
    let next = cron.nextRun(from);
    while (next !== null && next <= until && ticks.length < MAX_TICKS_PER_LOOK) {
      ticks.push(next);
      next = cron.nextRun(next);
    }
    return ticks;
  }

  private cronOf(workflow: Workflow): Cron | undefined {
    if (workflow.scheduleCron === null) return undefined;
    const key = `${workflow.scheduleCron}|${workflow.scheduleTimezone ?? 'UTC'}`;
    const cached = this.crons.get(workflow.id);
    if (cached?.key === key) return cached.cron;
    try {
      const cron = new Cron(workflow.scheduleCron, { timezone: workflow.scheduleTimezone ?? 'UTC', paused: true });
      this.crons.set(workflow.id, { key, cron });
      return cron;
    } catch (error) {
      // Validated when saved; a cron this version of croner refuses is logged, not fatal.
      this.options.logger.error({ err: error, workflow_id: workflow.id }, 'a stored schedule does not parse');
      return undefined;
    }
  }
}
