import { DomainError, type Actor } from '@agent-platform/kit';
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
    if (balance < 1) throw new DomainError('insufficient_credits', 'The tenant has no credits left; buy more to chat.');
  }

  async charge(actor: Actor, charge: { amount: number; reference: string; description: string }, requestId: string | undefined): Promise<void> {
    await this.billing.debitCredits({ ...charge, upToBalance: true }, { principal: principalOf(actor), ...(requestId ? { requestId } : {}) });
  }
}
