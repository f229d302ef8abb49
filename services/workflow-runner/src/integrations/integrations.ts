import type { OutboundHttp } from '@agent-platform/kit/security';
import type { EmailMessage, EmailOutput, EmailSender } from './email-integration.js';
import { runHttp, type HttpIntegrationConfig, type HttpIntegrationOutput } from './http-integration.js';
import { IntegrationError, type IntegrationContext } from './integration.js';
import { runSlack, type SlackIntegrationConfig, type SlackIntegrationOutput } from './slack-integration.js';

/** Keys every integration config may carry besides its own: the node's time-out is applied by the caller (ctx). */
interface CommonConfig {
  timeout_ms?: number;
}

/** An `integration` node's config as the graph validator produces it, templates already rendered. */
export type IntegrationConfig =
  | (CommonConfig & { service: 'http' } & HttpIntegrationConfig)
  | (CommonConfig & { service: 'slack' } & SlackIntegrationConfig)
  | (CommonConfig & { service: 'email' } & EmailMessage);

export type IntegrationService = IntegrationConfig['service'];
export type IntegrationOutput = HttpIntegrationOutput | SlackIntegrationOutput | EmailOutput;

export interface IntegrationsDeps {
  /** Outbound HTTP behind the platform's SSRF guard; owned (and closed) by the caller. */
  http: OutboundHttp;
  /** Owned (and closed) by the caller. */
  email: EmailSender;
}

/** Runs an `integration` node; fails only with an IntegrationError, whose message is the node's error. */
export class Integrations {
  private readonly deps: IntegrationsDeps;

  constructor(deps: IntegrationsDeps) {
    this.deps = deps;
  }

  run(config: IntegrationConfig, ctx: IntegrationContext): Promise<IntegrationOutput> {
    switch (config.service) {
      case 'http':
        return runHttp(this.deps.http, { url: config.url, method: config.method, headers: config.headers, body: config.body }, ctx);
      case 'slack':
        return runSlack(this.deps.http, { webhook_url: config.webhook_url, text: config.text }, ctx);
      case 'email':
        return this.deps.email.send({ to: config.to, subject: config.subject, text: config.text }, ctx);
      default:
        // The validator refuses other services (422); a stored graph from a later version might not.
        return Promise.reject(new IntegrationError(`unknown integration service ${JSON.stringify((config as { service: unknown }).service)}`));
    }
  }
}
