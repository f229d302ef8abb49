import { timedSignal } from '@agent-platform/kit';
import { createTransport, type Mail } from 'nodemailer';
import { IntegrationError, snippet, type IntegrationContext } from './integration.js';

/** The platform's SMTP relay (from SMTP_* config); e-mail nodes cannot choose their own. */
export interface SmtpConfig {
  host: string;
  port: number;
  /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user?: string;
  password?: string;
  /** The From of every message. */
  from: string;
}

export interface EmailSenderOptions {
  /** Undefined when the platform has no SMTP relay: e-mail nodes then fail. */
  smtp: SmtpConfig | undefined;
  /** Connect, greeting and socket-inactivity bound of the pooled connections (default: a node's default time-out, 30 s). */
  timeoutMs?: number;
}

export interface EmailMessage {
  to: string[];
  subject: string;
  text: string;
}

export interface EmailOutput {
  message_id: string;
  accepted: string[];
  rejected: string[];
}

const DEFAULT_TIMEOUT_MS = 30_000;
export const EMAIL_NOT_CONFIGURED = 'e-mail is not configured on this platform (SMTP_HOST)';

/**
 * The `email` integration: plain-text messages through a pool of SMTP connections. Each send is
 * bounded by the node's own time-out and the execution's signal: on either, nodemailer drops the
 * queued message or closes the one connection delivering it, and the node fails at once.
 */
export class EmailSender {
  private readonly transport: Mail | undefined;
  private readonly from: string;

  constructor(options: EmailSenderOptions) {
    const { smtp } = options;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.from = smtp?.from ?? '';
    this.transport =
      smtp === undefined
        ? undefined
        : createTransport({
            pool: true,
            host: smtp.host,
            port: smtp.port,
            secure: smtp.secure,
            auth: smtp.user === undefined ? undefined : { user: smtp.user, pass: smtp.password ?? '' },
            connectionTimeout: timeoutMs,
            greetingTimeout: timeoutMs,
            socketTimeout: timeoutMs,
          });
  }

  async send(message: EmailMessage, ctx: IntegrationContext): Promise<EmailOutput> {
    if (this.transport === undefined) throw new IntegrationError(EMAIL_NOT_CONFIGURED);
    if (ctx.signal.aborted) throw new IntegrationError('aborted');
    const bound = timedSignal(ctx.timeoutMs, ctx.signal, { timeout: () => new DOMException(`timed out after ${ctx.timeoutMs} ms`, 'TimeoutError') });
    try {
      const info = (await this.transport.sendMail({
        from: this.from,
        to: message.to,
        subject: message.subject,
        text: message.text,
        signal: bound.signal,
      })) as { messageId: string; accepted?: unknown[]; rejected?: unknown[] };
      return { message_id: info.messageId, accepted: addresses(info.accepted), rejected: addresses(info.rejected) };
    } catch (error) {
      // An abort does not prove the server had not taken the message already; SMTP cannot recall it.
      if (bound.expired) throw new IntegrationError(`timed out after ${ctx.timeoutMs} ms`, { cause: error });
      if (ctx.signal.aborted) throw new IntegrationError('aborted', { cause: error });
      throw smtpFailure(error);
    } finally {
      bound.dispose();
    }
  }

  /** Closes the pooled connections; one delivering a message finishes it first. */
  close(): void {
    this.transport?.close();
  }
}

function addresses(list: unknown[] | undefined): string[] {
  return (list ?? []).map((entry) => (typeof entry === 'string' ? entry : ((entry as { address?: string }).address ?? String(entry))));
}

// Failures that carry no SMTP reply, in words; nodemailer's own messages name the platform's relay.
const CODE_TEXT: Record<string, string> = {
  ECONNECTION: 'could not connect to the SMTP server',
  ESOCKET: 'could not connect to the SMTP server',
  EDNS: 'could not resolve the SMTP server',
  ETIMEDOUT: 'the SMTP server did not answer in time',
  ETLS: 'TLS with the SMTP server failed',
  EAUTH: 'the SMTP server refused the platform credentials',
  ENOAUTH: 'the SMTP server requires credentials the platform does not have',
};

/** An SMTP failure as the node's error: the server's reply when there is one (`550 5.1.1 … rejected`). */
function smtpFailure(error: unknown): IntegrationError {
  const { code, response } = (error ?? {}) as { code?: unknown; response?: unknown };
  if (typeof response === 'string' && response.trim() !== '') return new IntegrationError(`e-mail not sent: ${snippet(response)}`, { cause: error });
  const text = typeof code === 'string' ? CODE_TEXT[code] : undefined;
  return new IntegrationError(`e-mail not sent: ${text ?? 'the SMTP server failed'}`, { cause: error });
}
