import { randomUUID } from 'node:crypto';
import { isId } from '@agent-platform/kit';
import { PrincipalKind } from '@agent-platform/kit/grpc';
import { describe, expect } from 'vitest';
import { expectError, test, userPrincipal, type IdentityHarness, type TestUser } from './harness.js';

interface OutboxRow {
  id: string;
  subject: string;
  payload: { id: string; type: string; created_at: string; data: Record<string, unknown>; tenant_id: string; api_version: string };
}

function outbox(identity: IdentityHarness, tenantId: string, type: string): Promise<OutboxRow[]> {
  return identity.database.query<OutboxRow>(
    "select id, subject, payload from outbox where payload->>'tenant_id' = $1 and payload->>'type' = $2 order by created_at, id",
    [tenantId, type],
  );
}

function debit(identity: IdentityHarness, user: TestUser, amount: number, reference: string = randomUUID()) {
  return identity.billing.debitCredits({ amount, description: 'chat turn', reference }, { principal: user.principal });
}

async function balanceOf(identity: IdentityHarness, user: TestUser): Promise<number> {
  return (await identity.billing.getCredits({}, { principal: user.principal })).balance;
}

describe('GetCredits', () => {
  test('shows the balance, the low-credit threshold and the plan', async ({ identity }) => {
    const user = await identity.register();
    expect(await identity.billing.getCredits({}, { principal: user.principal })).toEqual({ balance: 1000, threshold: 100, plan: 'free' });
  });
});

describe('CreatePurchase', () => {
  test('grants the credits at once, records the purchase and emits billing.purchase.completed', async ({ identity }) => {
    const user = await identity.register();
    const purchase = await identity.billing.createPurchase({ credits: 500 }, { principal: user.principal });
    expect(isId('purchase', purchase.purchaseId)).toBe(true);
    expect(purchase).toMatchObject({ credits: 500, status: 'completed', balance: 1500 });
    expect(await balanceOf(identity, user)).toBe(1500);

    const [row] = await identity.database.query('select tenant_id, created_by, credits, status, provider from purchases where id = $1', [purchase.purchaseId]);
    expect(row).toEqual({ tenant_id: user.tenantId, created_by: user.id, credits: '500', status: 'completed', provider: 'built_in' });

    const events = await outbox(identity, user.tenantId, 'billing.purchase.completed');
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event!.subject).toBe(`events.${user.tenantId}.billing.purchase.completed`);
    expect(event!.id).toBe(event!.payload.id);
    expect(isId('event', event!.payload.id)).toBe(true);
    expect(event!.payload).toEqual({
      id: event!.id,
      type: 'billing.purchase.completed',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown,
      data: { purchase_id: purchase.purchaseId, credits: 500, balance: 1500 },
      tenant_id: user.tenantId,
      api_version: '2026-11-01',
    });
  });

  test('accepts 1 to 1,000,000 credits', async ({ identity }) => {
    const user = await identity.register();
    await identity.billing.createPurchase({ credits: 1 }, { principal: user.principal });
    await identity.billing.createPurchase({ credits: 1_000_000 }, { principal: user.principal });
    for (const credits of [0, -5, 1_000_001]) {
      const error = await expectError(identity.billing.createPurchase({ credits }, { principal: user.principal }), 'validation_error');
      expect(error.details.map((d) => d.field)).toEqual(['credits']);
    }
    expect(await balanceOf(identity, user)).toBe(1_001_001);
  });

  test('purchases of one tenant at once each get their own balance, in the reply, the ledger and the event', async ({ identity }) => {
    const user = await identity.register();
    const amounts = Array.from({ length: 20 }, (_, index) => index + 1);
    const purchases = await Promise.all(amounts.map((credits) => identity.billing.createPurchase({ credits }, { principal: user.principal })));
    const total = amounts.reduce((sum, credits) => sum + credits, 0);
    expect(await balanceOf(identity, user)).toBe(1000 + total);

    // Each ledger row starts where the one before it ended: no two purchases read the same balance.
    const ledger = await identity.database.query<{ description: string; amount: string; balance_after: string }>(
      "select description, amount, balance_after from credit_transactions where tenant_id = $1 and kind = 'purchase' order by balance_after::bigint",
      [user.tenantId],
    );
    let previous = 1000;
    for (const row of ledger) {
      expect(Number(row.balance_after) - Number(row.amount)).toBe(previous);
      previous = Number(row.balance_after);
    }
    expect(previous).toBe(1000 + total);

    const balanceAfter = new Map(ledger.map((row) => [row.description, Number(row.balance_after)]));
    const events = await identity.database.query<{ payload: string }>(
      "select payload::text as payload from outbox where payload->>'tenant_id' = $1 and payload->>'type' = 'billing.purchase.completed'",
      [user.tenantId],
    );
    expect(events).toHaveLength(amounts.length);
    for (const purchase of purchases) {
      expect(purchase.balance).toBe(balanceAfter.get(`Purchase ${purchase.purchaseId}`));
      const text = events.find((event) => event.payload.includes(purchase.purchaseId))!.payload;
      const envelope = JSON.parse(text) as { data: Record<string, unknown> };
      // Kept as written: webhooks receive (and sign) these very characters, in the envelope's order.
      expect(Object.keys(envelope)).toEqual(['id', 'type', 'created_at', 'data', 'tenant_id', 'api_version']);
      expect(envelope.data).toStrictEqual({ purchase_id: purchase.purchaseId, credits: purchase.credits, balance: purchase.balance });
      expect(Object.keys(envelope.data)).toEqual(['purchase_id', 'credits', 'balance']);
    }
  });

  test('is for owners only', async ({ identity }) => {
    const user = await identity.register();
    const admin = userPrincipal(user.id, user.tenantId, 'admin');
    await expectError(identity.billing.createPurchase({ credits: 10 }, { principal: admin }), 'forbidden');
    expect(await outbox(identity, user.tenantId, 'billing.purchase.completed')).toEqual([]);
  });
});

describe('DebitCredits', () => {
  test('takes the credits and writes a usage row to the ledger', async ({ identity }) => {
    const user = await identity.register();
    const outcome = await debit(identity, user, 30);
    expect(outcome.balance).toBe(970);
    expect(isId('transaction', outcome.transactionId)).toBe(true);
    const { items, total } = await identity.billing.listTransactions({ page: undefined }, { principal: user.principal });
    expect(total).toBe(2);
    expect(items.map(({ amount, balanceAfter, kind }) => ({ amount, balanceAfter, kind }))).toEqual([
      { amount: -30, balanceAfter: 970, kind: 'usage' },
      { amount: 1000, balanceAfter: 1000, kind: 'welcome_grant' },
    ]);
  });

  test('refuses more than the balance with insufficient_credits and changes nothing', async ({ identity }) => {
    const user = await identity.register();
    await expectError(debit(identity, user, 1001), 'insufficient_credits');
    expect(await balanceOf(identity, user)).toBe(1000);
    expect((await debit(identity, user, 1000)).balance).toBe(0);
    await expectError(debit(identity, user, 1), 'insufficient_credits');
  });

  test('with up_to_balance takes what is left, down to 0, and records what it took', async ({ identity }) => {
    const user = await identity.register();
    await debit(identity, user, 995);
    const served = await identity.billing.debitCredits({ amount: 8, description: 'chat turn', reference: randomUUID(), upToBalance: true }, { principal: user.principal });
    expect(served).toMatchObject({ balance: 0, debited: 5 });
    const empty = await identity.billing.debitCredits({ amount: 3, description: 'chat turn', reference: randomUUID(), upToBalance: true }, { principal: user.principal });
    expect(empty).toMatchObject({ balance: 0, debited: 0 });
    const { items } = await identity.billing.listTransactions({ page: undefined }, { principal: user.principal });
    expect(items.slice(0, 2).map(({ amount, balanceAfter }) => ({ amount, balanceAfter }))).toEqual([
      { amount: 0, balanceAfter: 0 },
      { amount: -5, balanceAfter: 0 },
    ]);
  });

  test('is idempotent on the reference, also when the repeats race', async ({ identity }) => {
    const user = await identity.register();
    const reference = `msg_${randomUUID()}`;
    const first = await debit(identity, user, 40, reference);
    expect(await debit(identity, user, 40, reference)).toEqual(first);

    const racing = `msg_${randomUUID()}`;
    const outcomes = await Promise.all(Array.from({ length: 6 }, () => debit(identity, user, 25, racing)));
    expect(new Set(outcomes.map((outcome) => outcome.transactionId)).size).toBe(1);
    expect(await balanceOf(identity, user)).toBe(1000 - 40 - 25);
    const rows = await identity.database.query('select id from credit_transactions where tenant_id = $1 and reference = any($2)', [
      user.tenantId,
      [reference, racing],
    ]);
    expect(rows).toHaveLength(2);
  });

  test('never overdraws under concurrent debits', async ({ identity }) => {
    const user = await identity.register();
    const outcomes = await Promise.allSettled(Array.from({ length: 30 }, () => debit(identity, user, 70)));
    const succeeded = outcomes.filter((outcome) => outcome.status === 'fulfilled');
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [(outcome.reason as { code?: string }).code] : []));
    expect(succeeded).toHaveLength(14); // 14 × 70 = 980 ≤ 1000 < 15 × 70
    expect(new Set(refused)).toEqual(new Set(['insufficient_credits']));
    expect(await balanceOf(identity, user)).toBe(20);

    // The balance is the sum of the ledger.
    const [sum] = await identity.database.query<{ total: string }>('select sum(amount)::text as total from credit_transactions where tenant_id = $1', [user.tenantId]);
    expect(sum!.total).toBe('20');
  });

  test('emits billing.credits.low only when a debit crosses below the threshold', async ({ identity }) => {
    const user = await identity.register();
    await debit(identity, user, 800); // 200: still above 100
    expect(await outbox(identity, user.tenantId, 'billing.credits.low')).toEqual([]);
    await debit(identity, user, 100); // 100: at the threshold is not below it
    expect(await outbox(identity, user.tenantId, 'billing.credits.low')).toEqual([]);
    await debit(identity, user, 1); // 99: crossed
    await debit(identity, user, 9); // 90: already below, no second event
    const events = await outbox(identity, user.tenantId, 'billing.credits.low');
    expect(events).toHaveLength(1);
    expect(events[0]!.subject).toBe(`events.${user.tenantId}.billing.credits.low`);
    expect(events[0]!.payload).toMatchObject({ type: 'billing.credits.low', tenant_id: user.tenantId, data: { balance: 99, threshold: 100 }, api_version: '2026-11-01' });

    await identity.billing.createPurchase({ credits: 500 }, { principal: user.principal }); // 590
    await debit(identity, user, 500); // 90: crossed again
    expect(await outbox(identity, user.tenantId, 'billing.credits.low')).toHaveLength(2);
  });

  test('validates amount and reference', async ({ identity }) => {
    const user = await identity.register();
    const error = await expectError(
      identity.billing.debitCredits({ amount: 0, description: '', reference: '' }, { principal: user.principal }),
      'validation_error',
    );
    expect(error.details.map((d) => d.field)).toEqual(['amount', 'reference']);
  });

  test('works for API-key principals, in the key\u2019s tenant only', async ({ identity }) => {
    const alice = await identity.register();
    const bob = await identity.register();
    const key = { ...alice.principal, kind: PrincipalKind.KIND_API_KEY, apiKeyId: 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV', role: 'member', scopes: ['*'] };
    await identity.billing.debitCredits({ amount: 5, description: '', reference: randomUUID() }, { principal: key });
    expect(await balanceOf(identity, alice)).toBe(995);
    expect(await balanceOf(identity, bob)).toBe(1000);
  });
});

describe('ListTransactions', () => {
  test('pages the ledger newest first and sees only the principal tenant', async ({ identity }) => {
    const user = await identity.register();
    const other = await identity.register();
    for (const amount of [1, 2, 3, 4]) await debit(identity, user, amount);
    const page = await identity.billing.listTransactions({ page: { page: 2, perPage: 2 } }, { principal: user.principal });
    expect(page.total).toBe(5);
    expect(page.items.map((item) => item.amount)).toEqual([-2, -1]);
    const others = await identity.billing.listTransactions({ page: undefined }, { principal: other.principal });
    expect(others.items.map((item) => item.kind)).toEqual(['welcome_grant']);
    await expectError(identity.billing.listTransactions({ page: { page: -1, perPage: 10 } }, { principal: user.principal }), 'validation_error');
  });
});
