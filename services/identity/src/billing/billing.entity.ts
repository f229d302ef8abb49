import { defineEntity, p } from '@mikro-orm/postgresql';

export const TRANSACTION_KINDS = ['welcome_grant', 'purchase', 'usage'] as const;
export type TransactionKind = (typeof TRANSACTION_KINDS)[number];

/** One ledger row; every balance change writes one, in the same transaction. */
export const CreditTransactionSchema = defineEntity({
  name: 'CreditTransaction',
  tableName: 'credit_transactions',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    /** Positive for grants and purchases, negative for usage. */
    amount: p.bigint('number'),
    balanceAfter: p.bigint('number'),
    kind: p.enum(TRANSACTION_KINDS),
    description: p.string(),
    /** The caller's idempotency key of a debit; unique per tenant (`credit_transactions_reference_key`). */
    reference: p.string().strictNullable(),
    createdAt: p.datetime(),
  },
});

export class CreditTransaction extends CreditTransactionSchema.class {}
CreditTransactionSchema.setClass(CreditTransaction);

export const PURCHASE_STATUSES = ['pending', 'completed', 'failed'] as const;
export type PurchaseStatus = (typeof PURCHASE_STATUSES)[number];

export const PurchaseSchema = defineEntity({
  name: 'Purchase',
  tableName: 'purchases',
  properties: {
    id: p.string().primary(),
    tenantId: p.string(),
    createdBy: p.string(),
    credits: p.bigint('number'),
    status: p.enum(PURCHASE_STATUSES),
    /** Which PaymentProvider handled it, and its own reference for the payment. */
    provider: p.string(),
    providerReference: p.string().strictNullable(),
    createdAt: p.datetime(),
    completedAt: p.datetime().strictNullable(),
  },
});

export class Purchase extends PurchaseSchema.class {}
PurchaseSchema.setClass(Purchase);
