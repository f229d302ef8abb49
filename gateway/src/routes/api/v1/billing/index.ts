import type { FastifyPluginCallbackZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callAs } from '../../../../http/calls.js';
import { iso, PageQuery, pageOf, TenantQuery, Timestamp } from '../../../../http/schemas.js';

const Credits = z.object({
  balance: z.int(),
  threshold: z.int().describe('billing.credits.low fires when a debit takes the balance below this.'),
  plan: z.string(),
});

const Transaction = z.object({
  id: z.string(),
  amount: z.int().describe('Positive for grants and purchases, negative for usage.'),
  balance_after: z.int(),
  kind: z.string().describe('welcome_grant | purchase | usage'),
  description: z.string(),
  created_at: Timestamp,
});

const PurchaseBody = z.object({ credits: z.int().min(1).max(1_000_000) }).meta({ examples: [{ credits: 5000 }] });

const Purchase = z.object({
  id: z.string(),
  credits: z.int(),
  status: z.string().describe('completed | pending'),
  balance: z.int().describe('The balance after the purchase.'),
  created_at: Timestamp,
});

/** /billing: the tenant's credits. Reads take billing:read for keys; purchases are owner-only, tokens only. */
const billingRoutes: FastifyPluginCallbackZod = (app, _options, done) => {
  app.get(
    '/credits',
    {
      schema: {
        operationId: 'getCredits',
        tags: ['billing'],
        summary: 'Get the credit balance, low-balance threshold and plan of the tenant',
        querystring: TenantQuery,
        response: { 200: Credits },
      },
    },
    async (request) => {
      const credits = await app.identity.billing.getCredits({}, callAs(request));
      return { balance: credits.balance, threshold: credits.threshold, plan: credits.plan };
    },
  );

  app.get(
    '/transactions',
    {
      schema: {
        operationId: 'listCreditTransactions',
        tags: ['billing'],
        summary: 'List the credit ledger of the tenant, newest first',
        querystring: PageQuery,
        response: { 200: pageOf(Transaction) },
      },
    },
    async (request) => {
      const { page, per_page } = request.query;
      const answer = await app.identity.billing.listTransactions({ page: { page, perPage: per_page } }, callAs(request));
      return {
        items: answer.items.map((item) => ({
          id: item.id,
          amount: item.amount,
          balance_after: item.balanceAfter,
          kind: item.kind,
          description: item.description,
          created_at: iso(item.createdAt),
        })),
        total: answer.total,
        page,
        per_page,
      };
    },
  );

  app.post(
    '/purchases',
    {
      schema: {
        operationId: 'purchaseCredits',
        tags: ['billing'],
        summary: 'Buy credits through the configured payment provider',
        querystring: TenantQuery,
        body: PurchaseBody,
        response: { 201: Purchase },
      },
    },
    async (request, reply) => {
      const purchase = await app.identity.billing.createPurchase({ credits: request.body.credits }, callAs(request));
      return reply.code(201).send({
        id: purchase.purchaseId,
        credits: purchase.credits,
        status: purchase.status,
        balance: purchase.balance,
        created_at: iso(purchase.createdAt),
      });
    },
  );
  done();
};

export default billingRoutes;
