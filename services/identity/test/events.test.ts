import { randomBytes, randomUUID } from 'node:crypto';
import { NatsEventBus, type EventEnvelope } from '@agent-platform/kit/events';
import { GrpcChannel } from '@agent-platform/kit/grpc';
import { createTestDatabase, deleteNatsStream } from '@agent-platform/kit/testing';
import { AuthServiceService } from '@agent-platform/proto/identity/v1/auth';
import { BillingServiceService } from '@agent-platform/proto/identity/v1/billing';
import { describe, expect, vi } from 'vitest';
import { migrations, openDatabase } from '../src/database.js';
import { logger, startService, test, userPrincipal, uniqueEmail } from './harness.js';

// decisions §8: identity's billing events leave through the outbox and the relay onto the bus.

const ENVELOPE_KEYS = ['id', 'type', 'created_at', 'data', 'tenant_id', 'api_version'];
const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const NATS_URL = process.env.TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

describe('billing events on the bus', () => {
  test('a purchase publishes billing.purchase.completed {purchase_id, credits, balance}', async ({ identity }) => {
    const user = await identity.register();
    const purchase = await identity.billing.createPurchase({ credits: 250 }, { principal: user.principal });
    const { envelope, delivery } = await identity.events.waitFor('billing.purchase.completed', user.tenantId);
    expect(envelope).toEqual({
      id: expect.stringMatching(/^evt_/),
      type: 'billing.purchase.completed',
      created_at: expect.stringMatching(TIMESTAMP),
      data: { purchase_id: purchase.purchaseId, credits: 250, balance: 1250 },
      tenant_id: user.tenantId,
      api_version: '2026-11-01',
    });
    // Delivered as recorded, in envelope order, and marked sent once the bus had it.
    expect(Object.keys(JSON.parse(delivery.json) as object)).toEqual(ENVELOPE_KEYS);
    const [row] = await identity.database.query<{ text: string; published_at: Date | null }>(
      'select payload::text as text, published_at from outbox where id = $1',
      [envelope.id],
    );
    expect(delivery.json).toBe(row!.text);
    await vi.waitFor(async () => {
      const [stamped] = await identity.database.query<{ published_at: Date | null }>('select published_at from outbox where id = $1', [envelope.id]);
      expect(stamped!.published_at).toBeInstanceOf(Date);
    });
  });

  test('a debit that crosses the threshold publishes billing.credits.low {balance, threshold}', async ({ identity }) => {
    const user = await identity.register();
    const debit = (amount: number) => identity.billing.debitCredits({ amount, description: 'chat', reference: randomUUID() }, { principal: user.principal });
    await debit(850); // 150
    await debit(60); // 90: crossed
    const { envelope } = await identity.events.waitFor('billing.credits.low', user.tenantId);
    expect(envelope).toMatchObject({ type: 'billing.credits.low', tenant_id: user.tenantId, api_version: '2026-11-01' });
    expect(envelope.data).toEqual({ balance: 90, threshold: 100 });
    const lows = identity.events.received.filter(({ envelope: e }) => e.tenant_id === user.tenantId && e.type === 'billing.credits.low');
    expect(lows).toHaveLength(1);
  });

  test('events of one tenant reach the bus in the order they were committed', async ({ identity }) => {
    const user = await identity.register();
    for (const credits of [1, 2, 3, 4, 5]) await identity.billing.createPurchase({ credits }, { principal: user.principal });
    await vi.waitFor(() => expect(ofTenant(identity.events.received, user.tenantId)).toHaveLength(5));
    expect(ofTenant(identity.events.received, user.tenantId).map((data) => data.credits)).toEqual([1, 2, 3, 4, 5]);
  });
});

function ofTenant(received: readonly { envelope: EventEnvelope<object> }[], tenantId: string): { credits?: number }[] {
  return received.filter(({ envelope }) => envelope.tenant_id === tenantId && envelope.type === 'billing.purchase.completed').map(({ envelope }) => envelope.data);
}

describe('billing events over NATS JetStream', () => {
  test('reach a durable consumer of the stream', async () => {
    const database = await createTestDatabase({ name: 'identity', migrations, migrate: (url) => openDatabase(url, logger).then((orm) => orm.close()) });
    const tag = randomBytes(5).toString('hex');
    const stream = `IDENTITY_${tag}`;
    const bus = await NatsEventBus.connect({ servers: NATS_URL, name: 'identity-test', logger, stream, subjectPrefix: `identity_${tag}` });
    const { service, address } = await startService(database, bus);
    const channel = new GrpcChannel(address);
    try {
      const received: EventEnvelope<object>[] = [];
      await bus.subscribe({ name: 'webhooks', filter: `identity_${tag}.*.billing.>`, concurrency: 2, handle: (envelope) => Promise.resolve(void received.push(envelope)) });
      const registered = await channel.client(AuthServiceService).register({ email: uniqueEmail(), password: `pw-${randomUUID()}` });
      const principal = userPrincipal(registered.id, registered.tenantId, 'owner');
      const purchase = await channel.client(BillingServiceService).createPurchase({ credits: 40 }, { principal });
      await vi.waitFor(() => expect(received.map((envelope) => envelope.data)).toEqual([{ purchase_id: purchase.purchaseId, credits: 40, balance: 1040 }]), {
        timeout: 5_000,
        interval: 20,
      });
    } finally {
      channel.close();
      await service.stop();
      await bus.close();
      await deleteNatsStream(NATS_URL, stream);
      await database.drop();
    }
  });
});
