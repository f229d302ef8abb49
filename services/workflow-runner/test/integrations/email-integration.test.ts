import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { EMAIL_NOT_CONFIGURED, EmailSender, type SmtpConfig } from '../../src/integrations/email-integration.js';
import { IntegrationError } from '../../src/integrations/integration.js';
import { context, rejectionOf } from './outbound.js';

interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

interface SmtpPeer {
  port: number;
  mails: ReceivedMail[];
  /** Sessions the peer has seen end: proof that a connection was closed. */
  closedSessions(): number;
  /** DATA transactions begun, whether or not the peer ever answers them. */
  dataStarted(): number;
}

/** A real SMTP server (the `smtp-server` package) on 127.0.0.1:0, without TLS. */
async function startSmtpPeer(options: Partial<SMTPServerOptions> & { hang?: boolean } = {}): Promise<SmtpPeer> {
  const mails: ReceivedMail[] = [];
  let closed = 0;
  let dataStarted = 0;
  const { hang = false, ...serverOptions } = options;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session: SMTPServerSession, callback) {
      dataStarted += 1;
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (hang) return; // a server that takes the message and never answers
        mails.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((address) => address.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
    onClose() {
      closed += 1;
    },
    ...serverOptions,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as AddressInfo).port, mails, closedSessions: () => closed, dataStarted: () => dataStarted };
}

function sender(port: number, extra: Partial<SmtpConfig> = {}): EmailSender {
  const email = new EmailSender({ smtp: { host: '127.0.0.1', port, secure: false, from: 'Workflows <workflows@platform.test>', ...extra }, timeoutMs: 5_000 });
  onTestFinished(() => email.close());
  return email;
}

const MESSAGE = { to: ['ada@example.com', 'grace@example.com'], subject: 'Weekly report', text: 'All 12 checks passed.\nSee you on Monday.' };

describe('email integration', () => {
  it('delivers the message to the SMTP server: envelope, To, Subject and body', async () => {
    const peer = await startSmtpPeer();
    const output = await sender(peer.port).send(MESSAGE, context());
    expect(output).toEqual({ message_id: expect.stringMatching(/^<.+@.+>$/), accepted: MESSAGE.to, rejected: [] });
    expect(peer.mails).toHaveLength(1);
    const [mail] = peer.mails;
    expect(mail!.from).toBe('workflows@platform.test');
    expect(mail!.to).toEqual(MESSAGE.to);
    expect(mail!.raw).toMatch(/^To: ada@example\.com, grace@example\.com\r$/m);
    expect(mail!.raw).toMatch(/^Subject: Weekly report\r$/m);
    expect(mail!.raw).toMatch(/^From: Workflows <workflows@platform\.test>\r$/m);
    expect(mail!.raw).toContain(`Message-ID: ${output.message_id}`);
    expect(mail!.raw).toContain('\r\n\r\nAll 12 checks passed.\r\nSee you on Monday.');
  });

  it("fails with the server's reply when it rejects the recipient, and reports partial rejections", async () => {
    const peer = await startSmtpPeer({
      onRcptTo(address, _session, callback) {
        if (address.address.startsWith('nobody@')) return callback(Object.assign(new Error('5.1.1 <nobody@example.com>: Recipient address rejected'), { responseCode: 550 }));
        callback();
      },
    });
    const email = sender(peer.port);
    const error = await rejectionOf(email.send({ ...MESSAGE, to: ['nobody@example.com'] }, context()));
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toBe('e-mail not sent: 550 5.1.1 <nobody@example.com>: Recipient address rejected');
    expect(peer.mails).toEqual([]);

    const partial = await email.send({ ...MESSAGE, to: ['ada@example.com', 'nobody@example.com'] }, context());
    expect(partial).toMatchObject({ accepted: ['ada@example.com'], rejected: ['nobody@example.com'] });
    expect(peer.mails.map((mail) => mail.to)).toEqual([['ada@example.com']]);
  });

  it("authenticates with the platform's credentials, and reports the server's refusal", async () => {
    const peer = await startSmtpPeer({
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === 'relay' && auth.password === 'right') return callback(null, { user: 'relay' });
        callback(new Error('Invalid username or password'));
      },
    });
    expect(await sender(peer.port, { user: 'relay', password: 'right' }).send(MESSAGE, context())).toMatchObject({ accepted: MESSAGE.to });
    const error = await rejectionOf(sender(peer.port, { user: 'relay', password: 'wrong' }).send(MESSAGE, context()));
    expect(error.message).toMatch(/^e-mail not sent: 535 .*Invalid username or password$/);
    expect(error.message).not.toContain('wrong');
    expect(peer.mails).toHaveLength(1);
  });

  it('fails every e-mail node when the platform has no SMTP relay', async () => {
    const email = new EmailSender({ smtp: undefined });
    const error = await rejectionOf(email.send(MESSAGE, context()));
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toBe(EMAIL_NOT_CONFIGURED);
    expect(EMAIL_NOT_CONFIGURED).toBe('e-mail is not configured on this platform (SMTP_HOST)');
    email.close();
  });

  it('gives up after the node time-out on a server that never answers, closing that connection', async () => {
    const peer = await startSmtpPeer({ hang: true });
    const started = performance.now();
    const error = await rejectionOf(sender(peer.port).send(MESSAGE, context({ timeoutMs: 400 })));
    expect(error).toBeInstanceOf(IntegrationError);
    expect(error.message).toBe('timed out after 400 ms');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(peer.dataStarted()).toBe(1);
    await vi.waitFor(() => expect(peer.closedSessions()).toBe(1));
  });

  it('stops at once when the execution is cancelled, closing that connection', async () => {
    const peer = await startSmtpPeer({ hang: true });
    const controller = new AbortController();
    const pending = rejectionOf(sender(peer.port).send(MESSAGE, context({ signal: controller.signal, timeoutMs: 30_000 })));
    await vi.waitFor(() => expect(peer.dataStarted()).toBe(1));
    const started = performance.now();
    controller.abort();
    const error = await pending;
    expect(error.message).toBe('aborted');
    expect(performance.now() - started).toBeLessThan(500);
    await vi.waitFor(() => expect(peer.closedSessions()).toBe(1));
  });
});
