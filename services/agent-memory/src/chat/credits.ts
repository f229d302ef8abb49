import { backoffDelay, DomainError, systemClock, type Actor, type Clock, type Logger } from '@agent-platform/kit';
import { principalOf, type PromiseClient } from '@agent-platform/kit/grpc';
import type { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';

/** What a chat turn needs of the credit ledger, which identity keeps. */
export interface Credits {
  /** insufficient_credits when the tenant's balance is below 1 (decisions §6). */
  ensureAvailable(actor: Actor, requestId: string | undefined): Promise<void>;
  /**
   * Takes `amount` for a turn already served, or what is left of the balance; idempotent on
   * `reference`, so a retried charge is taken once.
   */
  charge(actor: Actor, charge: { amount: number; reference: string; description: string }, requestId: string | undefined): Promise<void>;
}

/** What a turn is refused with when the tenant's balance is below 1. */
export function noCreditsLeft(): DomainError {
  return new DomainError('insufficient_credits', 'The tenant has no credits left; buy more to chat.');
}

/** Attempts at a charge for work already served, and the back-off between them. */
const CHARGE_ATTEMPTS = 3;
const CHARGE_BACKOFF = { initialMs: 200, maxMs: 1_000 };

export interface ServedCharge {
  actor: Actor;
  charge: { amount: number; reference: string; description: string };
  requestId: string | undefined;
  /** Records the charge taken (charged_at), once identity has it. */
  markCharged: () => Promise<void>;
  /** Where a charge that keeps failing is reported, with what it was for. */
  log: Logger;
  what: string;
}

/**
 * Charges for work already served (a chat round, an extraction; decisions §9.1), then records it
 * charged. Tried CHARGE_ATTEMPTS times, which identity takes once (idempotent on the reference); a
 * charge that keeps failing is logged and left uncharged (charged_at null) rather than taking
 * back what the user already has. Never throws.
 */
export async function chargeServed(credits: Credits, served: ServedCharge, clock: Clock = systemClock): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await credits.charge(served.actor, served.charge, served.requestId);
      await served.markCharged();
      return;
    } catch (error) {
      if (attempt >= CHARGE_ATTEMPTS) {
        served.log.error({ err: error, reference: served.charge.reference, credits: served.charge.amount }, `${served.what} could not be charged; it stays uncharged`);
        return;
      }
      await clock.sleep(backoffDelay(attempt, CHARGE_BACKOFF));
    }
  }
}

/** A chat round's charge: its answer's message id is the reference, so it is taken once however often it is asked. */
export function roundCharge(messageId: string, agentId: string, amount: number): ServedCharge['charge'] {
  return { amount, reference: messageId, description: `Chat with agent ${agentId}` };
}

/** decisions §6: ceil(total_tokens / 1000) credits a turn, at least 1. */
export function turnCost(totalTokens: number): number {
  return Math.max(1, Math.ceil(totalTokens / 1000));
}

/** Credits kept by identity, reached over gRPC on behalf of the caller. */
export class IdentityCredits implements Credits {
  private readonly billing: PromiseClient<typeof BillingServiceService>;

  constructor(billing: PromiseClient<typeof BillingServiceService>) {
    this.billing = billing;
  }

  async ensureAvailable(actor: Actor, requestId: string | undefined): Promise<void> {
    const { balance } = await this.billing.getCredits({}, { principal: principalOf(actor), ...(requestId ? { requestId } : {}) });
    if (balance < 1) throw noCreditsLeft();
  }

  async charge(actor: Actor, charge: { amount: number; reference: string; description: string }, requestId: string | undefined): Promise<void> {
    await this.billing.debitCredits({ ...charge, upToBalance: true }, { principal: principalOf(actor), ...(requestId ? { requestId } : {}) });
  }
}
