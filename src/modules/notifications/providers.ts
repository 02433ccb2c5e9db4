import { createTransport, type Transporter } from 'nodemailer';
import type { AppConfig, NotificationConfig } from '../../config';
import type { Notification, NotificationChannel } from './notification.entity';

/**
 * Where a queued message goes. `deliver` resolves once the provider accepted the message and throws
 * otherwise (the job then retries). `outbox` delivers nowhere: the row itself is the delivery.
 */
export interface NotificationProvider {
  readonly name: 'smtp' | 'http' | 'outbox';
  deliver(notification: Notification): Promise<void>;
}

export const outboxProvider: NotificationProvider = { name: 'outbox', deliver: async () => undefined };

/**
 * Email over SMTP: the stored MIME message, byte for byte. `smtp://` upgrades with STARTTLS whenever the
 * server offers it, `smtps://` is TLS from the start; certificates are verified (nodemailer's default) and
 * production refuses to send in clear text unless the URL says `?requireTLS=false`. Options in the URL's
 * query (`tls.servername=...`, `ignoreTLS=true`) override these defaults.
 */
export class SmtpProvider implements NotificationProvider {
  readonly name = 'smtp';
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly envelopeFrom: string,
    options: { timeoutMs: number; requireTls: boolean },
  ) {
    this.transport = createTransport({
      url,
      requireTLS: options.requireTls,
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  async deliver(notification: Notification): Promise<void> {
    if (!notification.mime) throw new Error('the notification has no MIME message');
    await this.transport.sendMail({
      envelope: { from: this.envelopeFrom, to: [notification.recipient] },
      raw: notification.mime,
    });
  }
}

/**
 * SMS or WhatsApp through an HTTP gateway: `POST {to, body, channel, id}` as JSON, with the bearer token
 * when one is configured and the notification id as `Idempotency-Key`. Anything but 2xx is a failure.
 */
export class HttpProvider implements NotificationProvider {
  readonly name = 'http';

  constructor(
    private readonly endpoint: { url: string; token?: string },
    private readonly timeoutMs: number,
  ) {}

  async deliver(notification: Notification): Promise<void> {
    const response = await fetch(this.endpoint.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': notification.id,
        ...(this.endpoint.token ? { authorization: `Bearer ${this.endpoint.token}` } : {}),
      },
      body: JSON.stringify({
        to: notification.recipient,
        body: notification.textBody,
        channel: notification.channel,
        id: notification.id,
      }),
      redirect: 'error',
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    await response.body?.cancel();
    // Only the status is kept: a gateway may echo the message (a one-time code) in its error body.
    if (!response.ok) throw new Error(`${notification.channel} gateway answered HTTP ${response.status}`);
  }
}

type Providers = Record<NotificationChannel, NotificationProvider>;

/** One set per configuration (a process has one): the SMTP transport is built once. */
const built = new WeakMap<NotificationConfig, Providers>();

export function providerFor(config: AppConfig, channel: NotificationChannel): NotificationProvider {
  let providers = built.get(config.notifications);
  if (!providers) {
    const n = config.notifications;
    providers = {
      email: n.smtpUrl
        ? new SmtpProvider(n.smtpUrl, n.mailFrom.address, { timeoutMs: n.timeoutMs, requireTls: config.env === 'production' })
        : outboxProvider,
      sms: n.sms ? new HttpProvider(n.sms, n.timeoutMs) : outboxProvider,
      whatsapp: n.whatsapp ? new HttpProvider(n.whatsapp, n.timeoutMs) : outboxProvider,
    };
    built.set(config.notifications, providers);
  }
  return providers[channel];
}
