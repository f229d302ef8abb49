import { actorOf, type Handlers } from '@agent-platform/kit/grpc';
import type { BillingServiceService, CreditTransaction as CreditTransactionMessage } from '@agent-platform/proto/identity/v1/billing';
import { parsePage } from '@agent-platform/kit';
import type { CreditTransaction } from './billing.entity.js';
import type { BillingService } from './billing.service.js';

export const BILLING_SERVICE_NAME = 'agentplatform.identity.v1.BillingService';

/** BillingService over gRPC: the ledger of the principal's tenant. */
export function billingHandlers(billing: BillingService): Handlers<typeof BillingServiceService> {
  return {
    getCredits: async (_request, ctx) => billing.getCredits(actorOf(ctx)),

    listTransactions: async (request, ctx) => {
      const { items, total } = await billing.listTransactions(actorOf(ctx), parsePage(request.page));
      return { items: items.map(toMessage), total };
    },

    createPurchase: async (request, ctx) => billing.createPurchase(actorOf(ctx), request.credits),

    debitCredits: async (request, ctx) =>
      billing.debit(actorOf(ctx), { amount: request.amount, description: request.description, reference: request.reference, upToBalance: request.upToBalance === true }),
  };
}

function toMessage(row: CreditTransaction): CreditTransactionMessage {
  return {
    id: row.id,
    amount: row.amount,
    balanceAfter: row.balanceAfter,
    kind: row.kind,
    description: row.description,
    createdAt: row.createdAt,
  };
}
