import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';

export interface ReceivedDelivery {
  /** Path and query, which tell the endpoints of one receiver apart. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as sent: signatures are over these bytes. */
  body: string;
  receivedAt: number;
}

/** A customer's webhook endpoint: records what arrives and answers with a status the test picks. */
export class Receiver {
  readonly received: ReceivedDelivery[] = [];
  /** The status answered to the next requests; a test flips it to simulate an outage. */
  status = 200;
  private readonly server: Server;
  private waiters: { count: number; resolve: () => void }[] = [];

  private constructor() {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        this.received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now() });
        response.writeHead(this.status, { 'content-type': 'application/json' }).end('{"ok":true}');
        this.waiters = this.waiters.filter((waiter) => {
          if (this.received.length < waiter.count) return true;
          waiter.resolve();
          return false;
        });
      });
    });
  }

  static async start(): Promise<Receiver> {
    const receiver = new Receiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks`;
  }

  /** Resolves once `count` deliveries in all have arrived; rejects after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 15_000): Promise<ReceivedDelivery[]> {
    if (this.received.length < count) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`expected ${count} deliveries, got ${this.received.length}`)), timeoutMs);
        this.waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    }
    return this.received.slice(0, count);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const stripe = new Stripe('sk_test_signature_checks_only');

/** Verifies a delivery as customers do, with both families of libraries; returns the event. */
export function verifyDelivery(delivery: ReceivedDelivery, secret: string): { id: string; type: string; data: Record<string, unknown>; tenant_id: string } {
  const header = delivery.headers['x-service-signature'];
  if (typeof header !== 'string') throw new Error('no x-service-signature header');
  // Stripe's verifier checks the `t=…,v1=…` scheme over "<t>.<raw body>" with the secret's bytes.
  const viaStripe = stripe.webhooks.constructEvent(delivery.body, header, secret) as unknown as { id: string };
  // Standard Webhooks keys with the base64 after `whsec_`, or with the raw bytes of another secret.
  const standard = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  const viaStandard = standard.verify(delivery.body, {
    'webhook-id': String(delivery.headers['webhook-id']),
    'webhook-timestamp': String(delivery.headers['webhook-timestamp']),
    'webhook-signature': String(delivery.headers['webhook-signature']),
  }) as { id: string };
  if (viaStripe.id !== viaStandard.id) throw new Error('the two verifiers disagree');
  return JSON.parse(delivery.body) as { id: string; type: string; data: Record<string, unknown>; tenant_id: string };
}
