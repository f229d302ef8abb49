import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** The raw message (headers and body). */
  data: string;
}

export interface SmtpPeer {
  /** The platform's SMTP settings pointing here. */
  env: Record<string, string>;
  /** Each accepted message is written here as a JSON file, for test files in other processes. */
  mailDir: string;
  /** The accepted messages, in order, for tests in this process. */
  received: ReceivedMail[];
  close(): Promise<void>;
}

/** A real SMTP server (the `smtp-server` package) on loopback, for `email` nodes (the runner's tests and the e2e suites). */
export async function startSmtpPeer(): Promise<SmtpPeer> {
  const mailDir = await mkdtemp(join(tmpdir(), 'agent-platform-mail-'));
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((recipient) => recipient.address),
          data: Buffer.concat(chunks).toString('utf8'),
        };
        received.push(mail);
        writeFile(join(mailDir, `${Date.now()}-${randomBytes(4).toString('hex')}.json`), JSON.stringify(mail)).then(() => callback(), callback);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    env: { SMTP_HOST: '127.0.0.1', SMTP_PORT: String(port), SMTP_FROM: 'workflows@platform.test' },
    mailDir,
    received,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(mailDir, { recursive: true, force: true });
    },
  };
}
