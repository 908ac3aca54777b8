import nodemailer from 'nodemailer';
import type { DataSource } from 'typeorm';

import { DEFAULT_DELIVERY_SETTINGS, retryDelayMs, updatedRows, type DeliverySettings } from './delivery';

/**
 * The exchange replies to suppliers (`exchange_replies`, written by @dte/reception: RespuestaDTE
 * and EnvioRecibos, already signed and stored): mailed to the supplier's exchange addresses as
 * an XML attachment, each attempt recorded (attempts, last_error, sent_at, message_id), failures
 * retried with the same backoff and lease as the receptor deliveries until `failed`.
 */
export interface ExchangeReplyDeliveryDeps {
  dataSource: DataSource;
  smtpUrl: string;
  mailFrom: string;
  clock?: () => Date;
  settings?: Partial<DeliverySettings>;
  logger?: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

interface DueReply {
  id: string;
  kind: 'recepcion' | 'resultado' | 'recibo';
  numero: string;
  rut_destino: string;
  correos: string[];
  attempts: number;
}

export interface ExchangeReplyOutcome {
  id: string;
  state: 'sent' | 'pending' | 'failed';
  error?: string;
}

const SUBJECTS: Record<DueReply['kind'], string> = {
  recepcion: 'Respuesta de intercambio: recepción del envío',
  resultado: 'Respuesta de intercambio: resultado de la aprobación comercial',
  recibo: 'Recibo de mercaderías o servicios (Ley 19.983)',
};

const FILE_PREFIX: Record<DueReply['kind'], string> = {
  recepcion: 'RespuestaDTE_Recepcion',
  resultado: 'RespuestaDTE_Resultado',
  recibo: 'EnvioRecibos',
};

export class ExchangeReplyDelivery {
  private readonly settings: DeliverySettings;
  private readonly now: () => Date;

  constructor(private readonly deps: ExchangeReplyDeliveryDeps) {
    this.settings = { ...DEFAULT_DELIVERY_SETTINGS, ...deps.settings };
    this.now = deps.clock ?? (() => new Date());
  }

  /** Sends every reply now due, a batch at a time. */
  async sweep(): Promise<ExchangeReplyOutcome[]> {
    const out: ExchangeReplyOutcome[] = [];
    for (;;) {
      const due = await this.claim();
      if (due.length === 0) break;
      for (const d of due) out.push(await this.attempt(d));
      if (due.length < this.settings.batch) break;
    }
    return out;
  }

  private async claim(): Promise<DueReply[]> {
    const now = this.now();
    return updatedRows<DueReply>(
      await this.deps.dataSource.query(
        `UPDATE exchange_replies SET lease_until = $2, updated_at = $1
          WHERE id IN (SELECT id FROM exchange_replies
                        WHERE state = 'pending' AND next_attempt_at <= $1
                          AND (lease_until IS NULL OR lease_until < $1)
                        ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
          RETURNING id, kind, numero, rut_destino, correos, attempts`,
        [now, new Date(now.getTime() + this.settings.leaseMs), this.settings.batch],
      ),
    );
  }

  private async attempt(d: DueReply): Promise<ExchangeReplyOutcome> {
    const db = this.deps.dataSource;
    try {
      const messageId = await this.send(d);
      await db.query(
        `UPDATE exchange_replies SET state = 'sent', attempts = attempts + 1, sent_at = $2, message_id = $3,
                last_error = NULL, lease_until = NULL, updated_at = $2 WHERE id = $1`,
        [d.id, this.now(), messageId],
      );
      this.deps.logger?.info({ replyId: d.id, kind: d.kind }, 'exchange reply sent');
      return { id: d.id, state: 'sent' };
    } catch (err) {
      const attempts = d.attempts + 1;
      const failed = attempts >= this.settings.maxAttempts;
      const message = (err as Error).message.slice(0, 500);
      await db.query(
        `UPDATE exchange_replies SET state = $2, attempts = $3, last_error = $4, next_attempt_at = $5,
                lease_until = NULL, updated_at = $6 WHERE id = $1`,
        [
          d.id,
          failed ? 'failed' : 'pending',
          attempts,
          message,
          new Date(this.now().getTime() + retryDelayMs(this.settings, attempts)),
          this.now(),
        ],
      );
      this.deps.logger?.warn({ replyId: d.id, attempts, err: message }, 'exchange reply failed');
      return { id: d.id, state: failed ? 'failed' : 'pending', error: message };
    }
  }

  private async send(d: DueReply): Promise<string> {
    const [row] = await this.deps.dataSource.query(`SELECT xml FROM exchange_replies WHERE id = $1`, [d.id]);
    const transport = nodemailer.createTransport(this.deps.smtpUrl);
    try {
      const info = await transport.sendMail({
        from: this.deps.mailFrom,
        to: d.correos,
        subject: `${SUBJECTS[d.kind]} N° ${d.numero}`,
        text: `${SUBJECTS[d.kind]} (N° ${d.numero}) para ${d.rut_destino}, firmada electrónicamente, en el XML adjunto.`,
        attachments: [
          {
            filename: `${FILE_PREFIX[d.kind]}_${d.numero}.xml`,
            content: row.xml as Buffer,
            contentType: 'application/xml; charset=ISO-8859-1',
          },
        ],
      });
      return info.messageId;
    } finally {
      transport.close();
    }
  }
}
