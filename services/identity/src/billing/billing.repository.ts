import type { EntityManager } from '@agent-platform/kit/db';
import { CreditTransaction, Purchase, type PurchaseStatus, type TransactionKind } from './billing.entity.js';

/** The unique index that makes a debit idempotent on its reference, per tenant. */
export const CREDIT_REFERENCE_KEY = 'credit_transactions_reference_key';

export interface NewCreditTransaction {
  id: string;
  tenantId: string;
  amount: number;
  balanceAfter: number;
  kind: TransactionKind;
  description: string;
  reference: string | null;
  createdAt: Date;
}

export interface NewPurchase {
  id: string;
  tenantId: string;
  createdBy: string;
  credits: number;
  status: PurchaseStatus;
  provider: string;
  providerReference: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

export class BillingRepository {
  private readonly em: EntityManager;

  constructor(em: EntityManager) {
    this.em = em;
  }

  /**
   * Adds `delta` (negative for a debit) to the balance in one atomic statement: the row lock it takes
   * serialises concurrent changes, and the condition is re-checked after the wait, so concurrent
   * debits can never take the balance below zero. Undefined when the balance would go negative or
   * the tenant does not exist. Call it inside the transaction that writes the ledger row.
   */
  async adjustBalance(tenantId: string, delta: number): Promise<number | undefined> {
    const rows = await this.em.execute<{ balance: string | number }[]>(
      'update "tenants" set "balance" = "balance" + ? where "id" = ? and "balance" + ? >= 0 returning "balance"',
      [delta, tenantId, delta],
    );
    const [row] = rows;
    return row === undefined ? undefined : Number(row.balance);
  }

  /** Takes up to `amount`, never below 0; the new balance and what was taken, or undefined for no such tenant. */
  async debitUpTo(tenantId: string, amount: number): Promise<{ balance: number; debited: number } | undefined> {
    const rows = await this.em.execute<{ balance: string | number; debited: string | number }[]>(
      `with "old" as (select "balance" from "tenants" where "id" = ? for update)
       update "tenants" set "balance" = "tenants"."balance" - least("old"."balance", ?) from "old" where "tenants"."id" = ?
       returning "tenants"."balance", "old"."balance" - "tenants"."balance" as "debited"`,
      [tenantId, amount, tenantId],
    );
    const [row] = rows;
    return row === undefined ? undefined : { balance: Number(row.balance), debited: Number(row.debited) };
  }

  async insertTransaction(row: NewCreditTransaction): Promise<void> {
    await this.em.insert(CreditTransaction, row);
  }

  findByReference(tenantId: string, reference: string): Promise<CreditTransaction | null> {
    return this.em.findOne(CreditTransaction, { tenantId, reference });
  }

  /** Newest first. */
  async listTransactions(tenantId: string, limit: number, offset: number): Promise<{ items: CreditTransaction[]; total: number }> {
    const [items, total] = await this.em.findAndCount(
      CreditTransaction,
      { tenantId },
      { orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], limit, offset },
    );
    return { items, total };
  }

  async insertPurchase(purchase: NewPurchase): Promise<void> {
    await this.em.insert(Purchase, purchase);
  }
}
