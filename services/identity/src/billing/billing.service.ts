import { DomainError, FieldErrors, newId, requireRole, type Actor, type Page } from '@agent-platform/kit';
import { isUniqueViolation, type EntityManager } from '@agent-platform/kit/db';
import { newEvent, recordEvent } from '@agent-platform/kit/events';
import type { TenantsRepository } from '../tenants/tenants.repository.js';
import type { CreditTransaction, PurchaseStatus, TransactionKind } from './billing.entity.js';
import { CREDIT_REFERENCE_KEY, type BillingRepository } from './billing.repository.js';
import type { PaymentProvider } from './payment-provider.js';

export const MAX_PURCHASE_CREDITS = 1_000_000;
const MAX_REFERENCE_LENGTH = 200;
const MAX_DESCRIPTION_LENGTH = 500;

export interface BillingServiceOptions {
  em: EntityManager;
  billing: BillingRepository;
  tenants: TenantsRepository;
  paymentProvider: PaymentProvider;
  /** billing.credits.low fires when a debit takes the balance from ≥ this to below it. */
  lowCreditsThreshold: number;
}

export interface Credits {
  balance: number;
  threshold: number;
  plan: string;
}

export interface PurchaseOutcome {
  purchaseId: string;
  credits: number;
  status: PurchaseStatus;
  balance: number;
  createdAt: Date;
}

export interface DebitRequest {
  amount: number;
  description: string;
  reference: string;
  /** Take what the balance holds (down to 0) rather than refuse: usage already served. */
  upToBalance?: boolean;
}

export interface DebitOutcome {
  balance: number;
  transactionId: string;
  /** `amount`, or less with `upToBalance`. */
  debited: number;
}

/** The credit ledger: every balance change is one ledger row written in the same transaction. */
export class BillingService {
  private readonly options: BillingServiceOptions;

  constructor(options: BillingServiceOptions) {
    this.options = options;
  }

  async getCredits(actor: Actor): Promise<Credits> {
    const tenant = await this.options.tenants.findTenant(actor.tenantId);
    if (!tenant) throw DomainError.notFound('Tenant');
    return { balance: tenant.balance, threshold: this.options.lowCreditsThreshold, plan: tenant.plan };
  }

  listTransactions(actor: Actor, page: Page): Promise<{ items: CreditTransaction[]; total: number }> {
    return this.options.billing.listTransactions(actor.tenantId, page.perPage, page.offset);
  }

  /**
   * Grants credits inside the caller's transaction (registration's welcome grant, a purchase):
   * the balance and its ledger row change together. Returns the new balance.
   */
  async grant(tenantId: string, credits: number, kind: TransactionKind, description: string, now: Date): Promise<number> {
    const balance = await this.options.billing.adjustBalance(tenantId, credits);
    if (balance === undefined) throw DomainError.notFound('Tenant');
    await this.options.billing.insertTransaction({
      id: newId('transaction'),
      tenantId,
      amount: credits,
      balanceAfter: balance,
      kind,
      description,
      reference: null,
      createdAt: now,
    });
    return balance;
  }

  /** decisions §9: owners buy credits through the configured payment provider. */
  async createPurchase(actor: Actor, credits: number): Promise<PurchaseOutcome> {
    requireRole(actor, 'owner');
    if (!Number.isInteger(credits) || credits < 1 || credits > MAX_PURCHASE_CREDITS) {
      throw DomainError.validation([{ field: 'credits', message: `must be an integer from 1 to ${MAX_PURCHASE_CREDITS}` }]);
    }
    const purchaseId = newId('purchase');
    const payment = await this.options.paymentProvider.charge({ purchaseId, tenantId: actor.tenantId, credits });
    const now = new Date();
    const purchase = {
      id: purchaseId,
      tenantId: actor.tenantId,
      createdBy: actor.userId,
      credits,
      status: payment.status,
      provider: this.options.paymentProvider.name,
      providerReference: payment.providerReference,
      createdAt: now,
      completedAt: payment.status === 'completed' ? now : null,
    };
    if (payment.status !== 'completed') {
      await this.options.billing.insertPurchase(purchase);
      return { purchaseId, credits, status: payment.status, balance: (await this.getCredits(actor)).balance, createdAt: now };
    }
    const balance = await this.options.billing.completePurchase({
      purchase,
      transaction: { id: newId('transaction'), description: `Purchase ${purchaseId}` },
      // The statement writes the balance after the purchase into the event.
      event: newEvent('billing.purchase.completed', actor.tenantId, { purchase_id: purchaseId, credits, balance: 0 }, now),
    });
    if (balance === undefined) throw DomainError.notFound('Tenant');
    return { purchaseId, credits, status: payment.status, balance, createdAt: now };
  }

  /**
   * Takes credits for usage, idempotently on `reference`: a repeated reference returns the first
   * outcome instead of charging twice, also when the two requests race (the unique index decides).
   */
  async debit(actor: Actor, request: DebitRequest): Promise<DebitOutcome> {
    validateDebit(request);
    const previous = await this.options.billing.findByReference(actor.tenantId, request.reference);
    if (previous) return { balance: previous.balanceAfter, transactionId: previous.id, debited: -previous.amount };
    try {
      return await this.options.em.transactional(() => this.debitOnce(actor.tenantId, request));
    } catch (error) {
      if (!isUniqueViolation(error, CREDIT_REFERENCE_KEY)) throw error;
      const winner = await this.options.billing.findByReference(actor.tenantId, request.reference);
      if (!winner) throw error;
      return { balance: winner.balanceAfter, transactionId: winner.id, debited: -winner.amount };
    }
  }

  private async debitOnce(tenantId: string, request: DebitRequest): Promise<DebitOutcome> {
    const { billing, em, lowCreditsThreshold: threshold } = this.options;
    const taken = request.upToBalance
      ? await billing.debitUpTo(tenantId, request.amount)
      : await billing.adjustBalance(tenantId, -request.amount).then((balance) => (balance === undefined ? undefined : { balance, debited: request.amount }));
    if (taken === undefined) {
      if (!(await this.options.tenants.findTenant(tenantId))) throw DomainError.notFound('Tenant');
      throw new DomainError('insufficient_credits', 'The balance is lower than the amount to debit.');
    }
    const { balance, debited } = taken;
    const now = new Date();
    const transactionId = newId('transaction');
    await billing.insertTransaction({
      id: transactionId,
      tenantId,
      amount: -debited,
      balanceAfter: balance,
      kind: 'usage',
      description: request.description,
      reference: request.reference,
      createdAt: now,
    });
    const before = balance + debited;
    if (before >= threshold && balance < threshold) {
      await recordEvent(em, newEvent('billing.credits.low', tenantId, { balance, threshold }, now));
    }
    return { balance, transactionId, debited };
  }
}

function validateDebit(request: DebitRequest): void {
  const errors = new FieldErrors();
  if (!Number.isSafeInteger(request.amount) || request.amount < 1) errors.add('amount', 'must be a positive integer');
  if (request.reference.trim() === '') errors.add('reference', 'is required');
  else if (request.reference.length > MAX_REFERENCE_LENGTH) errors.add('reference', `must be at most ${MAX_REFERENCE_LENGTH} characters`);
  if (request.description.length > MAX_DESCRIPTION_LENGTH) errors.add('description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  errors.throwIfAny();
}
