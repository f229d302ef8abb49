/**
 * The Credits contract: what a chat turn and an extraction count on of identity's ledger. Run
 * against IdentityCredits over the real identity (its own database, on 127.0.0.1:0) and against
 * TestCredits, the stand-in the other agent-memory tests charge.
 */
import { newId, type Actor } from '@agent-platform/kit';
import { GrpcChannel, principalOf } from '@agent-platform/kit/grpc';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdentityCredits, type Credits } from '../src/chat/credits.js';
import { expectError, TestCredits } from './support/harness.js';
import { startIdentity } from './support/identity.js';

interface LedgerUnderTest {
  credits: Credits;
  /** The owner of a newly registered tenant. */
  newTenant(): Promise<Actor>;
  balanceOf(actor: Actor): Promise<number>;
  /** Credits whose identity cannot be reached. */
  unreachable: Credits;
  close(): Promise<void>;
}

const adapters: { name: string; open: () => Promise<LedgerUnderTest> }[] = [
  {
    name: 'IdentityCredits over identity',
    open: async () => {
      const identity = await startIdentity();
      // Nothing listens on port 1.
      const nowhere = new GrpcChannel('127.0.0.1:1', { defaultDeadlineMs: 500 });
      return {
        credits: new IdentityCredits(identity.billing),
        newTenant: () => identity.register(),
        balanceOf: async (actor) => (await identity.billing.getCredits({}, { principal: principalOf(actor) })).balance,
        unreachable: new IdentityCredits(nowhere.client(BillingServiceService)),
        close: async () => {
          nowhere.close();
          await identity.stop();
        },
      };
    },
  },
  {
    name: 'TestCredits',
    open: () => {
      const credits = new TestCredits();
      const unreachable = new TestCredits();
      unreachable.failCharges = Infinity;
      return Promise.resolve({
        credits,
        newTenant: () => Promise.resolve({ kind: 'user', userId: newId('user'), tenantId: newId('tenant'), role: 'owner', scopes: [] }),
        balanceOf: (actor) => Promise.resolve(credits.balanceOf(actor.tenantId)),
        unreachable,
        close: () => Promise.resolve(),
      });
    },
  },
];

const charge = (amount: number, reference: string = newId('message')) => ({ amount, reference, description: 'Chat turn' });

describe.each(adapters)('Credits contract: $name', (adapter) => {
  let ledger: LedgerUnderTest;
  beforeAll(async () => {
    ledger = await adapter.open();
  });
  afterAll(() => ledger.close());

  it('a new tenant has the welcome grant, 1,000 credits, and may chat', async () => {
    const actor = await ledger.newTenant();
    expect(await ledger.balanceOf(actor)).toBe(1_000);
    await expect(ledger.credits.ensureAvailable(actor, undefined)).resolves.toBeUndefined();
  });

  it("a charge takes its amount from its own tenant's balance only", async () => {
    const [payer, bystander] = [await ledger.newTenant(), await ledger.newTenant()];
    await ledger.credits.charge(payer, charge(7), undefined);
    expect(await ledger.balanceOf(payer)).toBe(993);
    expect(await ledger.balanceOf(bystander)).toBe(1_000);
  });

  it('a charge is taken once per reference, whether sent again later or several times at once', async () => {
    const actor = await ledger.newTenant();
    const retried = charge(5);
    await ledger.credits.charge(actor, retried, undefined);
    await ledger.credits.charge(actor, retried, undefined);
    // The first charge of a reference stands: a later one with another amount takes nothing.
    await ledger.credits.charge(actor, { ...retried, amount: 50 }, undefined);
    const raced = charge(4);
    await Promise.all([1, 2, 3].map(() => ledger.credits.charge(actor, raced, undefined)));
    expect(await ledger.balanceOf(actor)).toBe(1_000 - 5 - 4);
  });

  it("one tenant's reference does not stand for another's: each tenant is charged", async () => {
    const [first, second] = [await ledger.newTenant(), await ledger.newTenant()];
    const shared = charge(3);
    await ledger.credits.charge(first, shared, undefined);
    await ledger.credits.charge(second, shared, undefined);
    expect([await ledger.balanceOf(first), await ledger.balanceOf(second)]).toEqual([997, 997]);
  });

  it('a charge above the balance takes what is left; below 1 credit the tenant may not chat, and a charge takes nothing', async () => {
    const actor = await ledger.newTenant();
    await ledger.credits.charge(actor, charge(999), undefined);
    await expect(ledger.credits.ensureAvailable(actor, undefined)).resolves.toBeUndefined();
    await ledger.credits.charge(actor, charge(5), undefined);
    expect(await ledger.balanceOf(actor)).toBe(0);
    await expectError(ledger.credits.ensureAvailable(actor, undefined), 'insufficient_credits');
    await ledger.credits.charge(actor, charge(2), undefined);
    expect(await ledger.balanceOf(actor)).toBe(0);
  });

  it('refuses, taking nothing, a charge of no positive amount, without a reference, or with one or a description too long', async () => {
    const actor = await ledger.newTenant();
    const refused = [charge(0), charge(-3), charge(1, ''), charge(1, ' '), charge(1, 'r'.repeat(201)), { ...charge(1), description: 'd'.repeat(501) }];
    for (const each of refused) await expectError(ledger.credits.charge(actor, each, undefined), 'validation_error');
    await ledger.credits.charge(actor, { amount: 1, reference: 'r'.repeat(200), description: 'd'.repeat(500) }, undefined);
    expect(await ledger.balanceOf(actor)).toBe(999);
  });

  it('checks and charges for any member of the tenant: a viewer, an API key without billing scopes', async () => {
    const owner = await ledger.newTenant();
    const viewer: Actor = { ...owner, role: 'viewer' };
    const key: Actor = { ...owner, kind: 'api_key', apiKeyId: newId('apiKey'), role: 'member', scopes: ['agents:read', 'agents:write'] };
    for (const actor of [viewer, key]) {
      await ledger.credits.ensureAvailable(actor, undefined);
      await ledger.credits.charge(actor, charge(2), undefined);
    }
    expect(await ledger.balanceOf(owner)).toBe(996);
  });

  it('a charge while identity cannot be reached fails as service_unavailable', async () => {
    const actor = await ledger.newTenant();
    await expectError(ledger.unreachable.charge(actor, charge(1), undefined), 'service_unavailable');
  });
});
