import type { Delivery, DeliveryAttempt, Webhook } from '@agent-platform/proto/webhooks/v1';
import { z } from 'zod';
import { iso, pathId, isoOrNull, queryInt, TenantQuery, Timestamp } from '../../../../http/schemas.js';

// The gateway checks shapes and types only. What a URL, an event type or a secret may be
// (https, no private addresses, the catalogue, 16..128 characters) is the dispatcher's to decide;
// its validation_error comes back with the offending fields named.

const WebhookUrl = z
  .url({ error: (issue) => (issue.code === 'invalid_format' ? 'Must be an absolute URL.' : undefined) })
  .describe('Where deliveries are POSTed: an https URL on a public address.');

const Events = z
  .array(z.string())
  .min(1)
  .describe('Event types from the catalogue (e.g. agent.message.completed), or "*" for all of them.');

const Metadata = z.record(z.string(), z.unknown()).describe('A free-form JSON object, kept with the webhook.');

const Description = z.string().describe('A note for people; not sent to the receiver.');

export const WebhookParams = z.object({ webhook_id: pathId('webhook', 'wh') });
export const DeliveryParams = WebhookParams.extend({ delivery_id: pathId('delivery', 'dlv') });

export const CreateWebhookBody = z.object({
  url: WebhookUrl,
  events: Events,
  secret: z
    .string()
    .optional()
    .describe('The signing secret (16..128 printable characters); generated (whsec_…) when absent.'),
  metadata: Metadata.optional(),
  description: Description.optional(),
}).meta({
  examples: [{ url: 'https://hooks.acme.test/agent-platform', events: ['agent.message.completed', 'workflow.execution.failed'], metadata: { team: 'support' }, description: 'Support dashboard' }],
});

/** Only the fields present change; an empty object changes nothing. */
export const UpdateWebhookBody = z.object({
  url: WebhookUrl.optional(),
  events: Events.optional().describe('Replaces the whole subscription.'),
  metadata: Metadata.optional().describe('Replaces the whole metadata object.'),
  description: Description.optional(),
}).meta({ examples: [{ events: ['*'] }] });

export const TestWebhookBody = z
  .object({ event_type: z.string().describe('The catalogue event type of the synthetic event sent.') })
  .meta({ examples: [{ event_type: 'agent.created' }] });

/** decisions §5: deliveries are cursor-paged. */
export const DeliveriesQuery = TenantQuery.extend({
  limit: queryInt({ min: 1, max: 100, fallback: 20, description: 'Deliveries per page, 1..100.' }),
  cursor: z.string().min(1).optional().describe('next_cursor of the previous page; absent for the first page.'),
});

const ReceiverStatus = z
  .int()
  .nullable()
  .describe("HTTP status of the receiver's answer; null when no HTTP response arrived (refused, timed out, blocked address).");

export const WebhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    status: z.string().describe('active | failed (after a delivery exhausted its retries; POST …/enable re-activates it).'),
    description: z.string().nullable(),
    metadata: Metadata,
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Webhook', description: 'A webhook endpoint. Its secret is never returned, except as signing_secret at creation and rotation.' });

export const WebhookWithSecret = WebhookSchema.extend({
  signing_secret: z.string().describe('Verifies the x-service-signature header; returned only here and by rotate-secret.'),
});

export const TestOutcome = z.object({
  success: z.boolean().describe('True when the receiver answered 2xx in time.'),
  delivery_id: z.string().describe('The test delivery, also in the delivery log.'),
  response_status: ReceiverStatus,
  response_time_ms: z.int().describe('Milliseconds until the answer or the failure.'),
  error: z.string().optional().describe('Why the delivery failed; present only when success is false.'),
});

export const DeliverySchema = z
  .object({
    id: z.string(),
    event_id: z.string(),
    event_type: z.string(),
    status: z.string().describe('pending | delivered | failed'),
    response_status: ReceiverStatus.describe("Of the latest attempt: the receiver's HTTP status, or null when none arrived or no attempt was made yet."),
    response_time_ms: z.int().describe('Of the latest attempt, in milliseconds; 0 before the first attempt.'),
    attempts: z.int().describe('Attempts made so far (5 at most per schedule; a retry adds more).'),
    delivered_at: Timestamp.nullable(),
    next_attempt_at: Timestamp.nullable().describe('When the next attempt is due; null when none is scheduled.'),
    error: z.string().nullable().describe('Of the latest failed attempt.'),
    created_at: Timestamp,
  })
  .meta({ id: 'WebhookDelivery', description: 'One event sent to one webhook, over all its attempts.' });

export const DeliveryAttemptSchema = z
  .object({
    number: z.int().describe('1 for the first attempt; a replay continues the count.'),
    started_at: Timestamp,
    response_status: ReceiverStatus,
    response_time_ms: z.int().describe('Milliseconds until the answer or the failure.'),
    outcome: z.string().describe('delivered | failed'),
    error: z.string().nullable().describe('Why the attempt failed; null when it was delivered.'),
  })
  .meta({ id: 'WebhookDeliveryAttempt', description: 'One attempt to send a delivery.' });

export const DeliveryWithAttemptsSchema = DeliverySchema.extend({
  attempt_log: z.array(DeliveryAttemptSchema).describe('Every attempt, oldest first.'),
}).meta({ id: 'WebhookDeliveryWithAttempts', description: 'One delivery with the record of every attempt.' });

export const DeliveryPage = z.object({
  items: z.array(DeliverySchema),
  total: z.int(),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last page.'),
});

function metadataOf(json: string): Record<string, unknown> {
  const value: unknown = json === '' ? {} : JSON.parse(json);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new Error('The dispatcher answered with metadata that is not a JSON object.');
  }
  return value as Record<string, unknown>;
}

/** The REST webhook of a gRPC answer; its absence is an upstream defect (500). */
export function webhookBody(webhook: Webhook | undefined): z.output<typeof WebhookSchema> {
  if (!webhook) throw new Error('The dispatcher answered without the webhook.');
  return {
    id: webhook.id,
    url: webhook.url,
    events: webhook.events,
    status: webhook.status,
    description: webhook.description ?? null,
    metadata: metadataOf(webhook.metadataJson),
    created_at: iso(webhook.createdAt),
    updated_at: iso(webhook.updatedAt),
  };
}

export function withSecret(answer: { webhook?: Webhook | undefined; signingSecret: string }): z.output<typeof WebhookWithSecret> {
  return { ...webhookBody(answer.webhook), signing_secret: answer.signingSecret };
}

/** gRPC carries "no HTTP response" as status 0. */
export function receiverStatus(status: number): number | null {
  return status === 0 ? null : status;
}

export function deliveryBody(delivery: Delivery | undefined): z.output<typeof DeliverySchema> {
  if (!delivery) throw new Error('The dispatcher answered without the delivery.');
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    status: delivery.status,
    response_status: receiverStatus(delivery.responseStatus),
    response_time_ms: delivery.responseTimeMs,
    attempts: delivery.attempts,
    delivered_at: isoOrNull(delivery.deliveredAt),
    next_attempt_at: isoOrNull(delivery.nextAttemptAt),
    error: delivery.error ?? null,
    created_at: iso(delivery.createdAt),
  };
}

function attemptBody(attempt: DeliveryAttempt): z.output<typeof DeliveryAttemptSchema> {
  return {
    number: attempt.number,
    started_at: iso(attempt.startedAt),
    response_status: receiverStatus(attempt.responseStatus),
    response_time_ms: attempt.responseTimeMs,
    outcome: attempt.outcome,
    error: attempt.error ?? null,
  };
}

export function deliveryWithAttemptsBody(delivery: Delivery | undefined): z.output<typeof DeliveryWithAttemptsSchema> {
  return { ...deliveryBody(delivery), attempt_log: (delivery?.attemptLog ?? []).map(attemptBody) };
}

/** JSON text for gRPC's metadata_json; absent stays absent. */
export function metadataJson(metadata: Record<string, unknown> | undefined): string | undefined {
  return metadata === undefined ? undefined : JSON.stringify(metadata);
}
