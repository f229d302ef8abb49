import type { Actor, Clock, Logger } from '@agent-platform/kit';
import type { ChatRepository } from './chat.repository.js';
import { chargeServed, roundCharge, type Credits } from './credits.js';

/** Rounds younger than this may still be charged by the turn that stored them. */
const GRACE_MS = 15_000;
/** Rounds charged per sweep; a longer backlog waits for the next. */
const SWEEP_LIMIT = 500;

export interface UnchargedRoundsOptions {
  chat: ChatRepository;
  credits: Credits;
  clock: Clock;
  logger: Logger;
}

/**
 * Charges model rounds that were stored and served but never charged: the process stopped between
 * a turn's commit and its charge, or identity refused every attempt. A charge is taken once per
 * round (its reference is the round's message id), so a round charged meanwhile costs nothing
 * more. Charged as the platform on the tenant's behalf: the credential of the turn is not kept.
 */
export class UnchargedRounds {
  private readonly options: UnchargedRoundsOptions;

  constructor(options: UnchargedRoundsOptions) {
    this.options = options;
  }

  /** How many rounds this sweep charged or found charged. */
  async chargeAll(): Promise<number> {
    const { chat, credits, clock, logger } = this.options;
    const rounds = await chat.unchargedRounds(new Date(clock.now() - GRACE_MS), SWEEP_LIMIT);
    for (const round of rounds) {
      const served = {
        actor: platformActor(round.tenant_id),
        charge: roundCharge(round.id, round.agent_id, round.credits),
        requestId: undefined,
        markCharged: () => chat.markCharged(round.id, new Date(clock.now())),
        log: logger,
        what: 'chat round left uncharged',
      };
      await chargeServed(credits, served, clock);
    }
    if (rounds.length > 0) logger.info({ rounds: rounds.length }, 'charged chat rounds left uncharged');
    return rounds.length;
  }
}

/** The platform acting for a tenant: what a charge on its behalf is made as. */
function platformActor(tenantId: string): Actor {
  return { kind: 'user', userId: 'platform', tenantId, role: 'member', scopes: [] };
}
