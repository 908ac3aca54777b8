import { fecha } from '@dte/es-cl';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Subscription } from './model';

/** Tells an organization's owner that one of its webhook endpoints was deactivated. */
export interface DisableNotifier {
  endpointDisabled(subscription: Subscription): Promise<void>;
}

/** Finds the e-mail of the owner of an organization; null when it has none. */
export type OwnerLookup = (organizationId: string) => Promise<string | null>;

export interface MailSettings {
  /** nodemailer transport URL, e.g. smtp://user:pass@mail.example.com:587 or smtps://… */
  smtpUrl: string;
  from: string;
}

export class MailDisableNotifier implements DisableNotifier {
  private readonly transport: Transporter;

  constructor(
    settings: MailSettings,
    private readonly ownerEmail: OwnerLookup,
    transportOptions: Record<string, unknown> = {},
  ) {
    this.from = settings.from;
    this.transport = nodemailer.createTransport(settings.smtpUrl, transportOptions);
  }

  private readonly from: string;

  async endpointDisabled(s: Subscription): Promise<void> {
    const to = await this.ownerEmail(s.organization_id);
    if (!to) throw new Error(`organization ${s.organization_id} has no owner e-mail to notify`);
    const host = safeHost(s.url);
    await this.transport.sendMail({
      from: this.from,
      to,
      subject: `Webhook desactivado: ${host}`,
      text: [
        `El endpoint de webhooks ${s.url} (suscripción ${s.id}, ambiente ${s.sii_env}) fue desactivado`,
        `el ${fecha(s.disabled_at)} (hora de Chile).`,
        '',
        `Motivo: ${s.disabled_reason ?? ''}`,
        '',
        'Un endpoint desactivado no se reactiva solo: elimine la suscripción y regístrela de nuevo',
        'cuando el endpoint responda. Los eventos perdidos se recuperan con GET /dtes?polled_since=<iso>.',
      ].join('\n'),
    });
  }

  close(): void {
    this.transport.close();
  }
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}
