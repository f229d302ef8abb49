import { ACCESS, DomainError, FieldErrors, newId, requireAccess, type Actor, type Page } from '@agent-platform/kit';
import type { OutboundPolicy, SecretBox } from '@agent-platform/kit/security';
import { generateSecret } from '../security/signing.js';
import { checkDescription, checkEvents, checkMetadata, checkSecret, checkUrl } from './webhook-input.js';
import type { Webhook } from './webhooks.entity.js';
import type { WebhookChanges, WebhooksRepository } from './webhooks.repository.js';

export interface WebhooksServiceOptions {
  webhooks: WebhooksRepository;
  secrets: SecretBox;
  policy: OutboundPolicy;
}

export interface CreateWebhook {
  url: string;
  events: readonly string[];
  secret: string | undefined;
  metadataJson: string | undefined;
  description: string | undefined;
}

/** Fields of a partial update; undefined means "leave as it is". */
export interface UpdateWebhook {
  url: string | undefined;
  events: readonly string[] | undefined;
  metadataJson: string | undefined;
  description: string | undefined;
}

export interface WithSecret {
  webhook: Webhook;
  /** Returned at creation and rotation only; stored sealed. */
  signingSecret: string;
}

/** Endpoints of the actor's tenant: validation (incl. the SSRF guard), secrets, status. */
export class WebhooksService {
  private readonly options: WebhooksServiceOptions;

  constructor(options: WebhooksServiceOptions) {
    this.options = options;
  }

  async create(actor: Actor, request: CreateWebhook, now = new Date()): Promise<WithSecret> {
    requireAccess(actor, ACCESS.webhooks.write);
    const errors = new FieldErrors();
    const url = await checkUrl(request.url, this.options.policy, errors);
    const events = checkEvents(request.events, errors);
    if (request.secret !== undefined) checkSecret(request.secret, errors);
    const metadata = request.metadataJson === undefined ? '{}' : checkMetadata(request.metadataJson, errors);
    const description = request.description === undefined ? null : checkDescription(request.description, errors);
    errors.throwIfAny();

    const id = newId('webhook');
    const signingSecret = request.secret ?? generateSecret();
    const webhook = await this.options.webhooks.insert({
      id,
      tenantId: actor.tenantId,
      url: url!,
      events,
      description,
      metadata,
      secretSealed: this.options.secrets.seal(signingSecret, id),
      createdAt: now,
    });
    return { webhook, signingSecret };
  }

  list(actor: Actor, page: Page): Promise<{ items: Webhook[]; total: number }> {
    requireAccess(actor, ACCESS.webhooks.read);
    return this.options.webhooks.list(actor.tenantId, page.perPage, page.offset);
  }

  async get(actor: Actor, id: string): Promise<Webhook> {
    requireAccess(actor, ACCESS.webhooks.read);
    return found(await this.options.webhooks.find(actor.tenantId, id));
  }

  async update(actor: Actor, id: string, request: UpdateWebhook, now = new Date()): Promise<Webhook> {
    requireAccess(actor, ACCESS.webhooks.write);
    // not_found before validation: a foreign id must not learn anything from the error.
    found(await this.options.webhooks.find(actor.tenantId, id));
    const errors = new FieldErrors();
    const changes: WebhookChanges = {};
    if (request.url !== undefined) changes.url = await checkUrl(request.url, this.options.policy, errors);
    if (request.events !== undefined) changes.events = checkEvents(request.events, errors);
    if (request.metadataJson !== undefined) changes.metadata = checkMetadata(request.metadataJson, errors);
    if (request.description !== undefined) changes.description = checkDescription(request.description, errors);
    errors.throwIfAny();
    return found(await this.options.webhooks.update(actor.tenantId, id, changes, now));
  }

  async delete(actor: Actor, id: string): Promise<void> {
    requireAccess(actor, ACCESS.webhooks.write);
    if (!(await this.options.webhooks.delete(actor.tenantId, id))) throw DomainError.notFound('Webhook');
  }

  /** A failed endpoint becomes active; its deliveries still pending resume in order. */
  async enable(actor: Actor, id: string, now = new Date()): Promise<Webhook> {
    requireAccess(actor, ACCESS.webhooks.write);
    return found(await this.options.webhooks.enable(actor.tenantId, id, now));
  }

  /** The old secret stops signing at once: every attempt from now on uses the new one. */
  async rotateSecret(actor: Actor, id: string, now = new Date()): Promise<WithSecret> {
    requireAccess(actor, ACCESS.webhooks.write);
    const signingSecret = generateSecret();
    const webhook = await this.options.webhooks.replaceSecret(actor.tenantId, id, this.options.secrets.seal(signingSecret, id), now);
    return { webhook: found(webhook), signingSecret };
  }
}

function found(webhook: Webhook | null): Webhook {
  if (!webhook) throw DomainError.notFound('Webhook');
  return webhook;
}
