import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { as, ISO_MS, newAccount, newApiKey, startHarness, type Harness, matching } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

describe('GET /billing/credits', () => {
  it('answers balance, threshold and plan, for a token and for a key with billing:read', async () => {
    const account = await newAccount(h.app);
    const byToken = await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/credits' });
    expect(byToken.statusCode).toBe(200);
    expect(byToken.json()).toEqual({ balance: 1000, threshold: 100, plan: 'free' });
    const key = await newApiKey(h.app, account, ['billing:read']);
    const byKey = await as(h.app, key.key, { method: 'GET', url: '/api/v1/billing/credits' });
    expect(byKey.json()).toEqual({ balance: 1000, threshold: 100, plan: 'free' });
  });
});

describe('POST /billing/purchases and GET /billing/transactions', () => {
  it('buys credits and lists the ledger newest first, field by field', async () => {
    const account = await newAccount(h.app);
    const purchase = await as(h.app, account.token, { method: 'POST', url: '/api/v1/billing/purchases', payload: { credits: 500 } });
    expect(purchase.statusCode).toBe(201);
    expect(purchase.json()).toEqual({ id: matching(/^pur_/), credits: 500, status: 'completed', balance: 1500, created_at: matching(ISO_MS) });
    const purchaseId = purchase.json<{ id: string }>().id;

    const ledger = await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/transactions' });
    expect(ledger.statusCode).toBe(200);
    expect(ledger.json()).toEqual({
      items: [
        { id: matching(/^txn_/), amount: 500, balance_after: 1500, kind: 'purchase', description: `Purchase ${purchaseId}`, created_at: matching(ISO_MS) },
        { id: matching(/^txn_/), amount: 1000, balance_after: 1000, kind: 'welcome_grant', description: 'Welcome credits', created_at: matching(ISO_MS) },
      ],
      total: 2,
      page: 1,
      per_page: 20,
    });
    const paged = await as(h.app, account.token, { method: 'GET', url: '/api/v1/billing/transactions', query: { page: '2', per_page: '1' } });
    expect(paged.json()).toMatchObject({ items: [{ kind: 'welcome_grant' }], total: 2, page: 2, per_page: 1 });
  });
});
