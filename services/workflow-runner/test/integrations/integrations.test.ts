import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startReceiver } from '@agent-platform/kit/testing';
import { EmailSender } from '../../src/integrations/email-integration.js';
import { IntegrationError } from '../../src/integrations/integration.js';
import { Integrations, type IntegrationConfig } from '../../src/integrations/integrations.js';
import { context, outboundHttp, rejectionOf } from './outbound.js';

async function smtpPort(subjects: string[]): Promise<number> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        subjects.push(/^Subject: (.*)\r$/m.exec(Buffer.concat(chunks).toString('utf8'))?.[1] ?? '');
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.server.address() as AddressInfo).port;
}

describe('Integrations.run', () => {
  it("dispatches on config.service, ignoring the node's timeout_ms key (the context carries it)", async () => {
    const peer = await startReceiver((request) =>
      request.path === '/slack' ? { headers: { 'content-type': 'text/html' }, body: 'ok' } : { json: { path: request.path } },
    );
    const subjects: string[] = [];
    const email = new EmailSender({ smtp: { host: '127.0.0.1', port: await smtpPort(subjects), secure: false, from: 'wf@platform.test' } });
    onTestFinished(() => email.close());
    const integrations = new Integrations({ http: outboundHttp(), email });

    const configs: IntegrationConfig[] = [
      { service: 'http', url: peer.url('/api'), method: 'GET', headers: {}, timeout_ms: 1_000 },
      { service: 'slack', webhook_url: peer.url('/slack'), text: 'hi' },
      { service: 'email', to: ['ada@example.com'], subject: 'Ping', text: 'pong' },
    ];
    const [http, slack, mail] = await Promise.all(configs.map((config) => integrations.run(config, context())));
    expect(http).toMatchObject({ status: 200, body: { path: '/api' } });
    expect(slack).toEqual({ status: 200, ok: true });
    expect(mail).toMatchObject({ accepted: ['ada@example.com'], rejected: [] });
    expect(peer.requests.map((request) => `${request.method} ${request.path}`).sort()).toEqual(['GET /api', 'POST /slack']);
    expect(subjects).toEqual(['Ping']);
  });

  it('fails a service it does not know with an IntegrationError', async () => {
    const integrations = new Integrations({ http: outboundHttp(), email: new EmailSender({ smtp: undefined }) });
    const error = await rejectionOf(integrations.run({ service: 'teams' } as unknown as IntegrationConfig, context()));
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toBe('unknown integration service "teams"');
  });
});
