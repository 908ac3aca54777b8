import nodemailer from 'nodemailer';
import type { DataSource } from 'typeorm';

import { DEFAULT_DELIVERY_SETTINGS, LeasedSends, type DeliverySettings } from './leased-sends';

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
  private readonly queue: LeasedSends<DueReply, ExchangeReplyOutcome>;

  constructor(private readonly deps: ExchangeReplyDeliveryDeps) {
    this.queue = new LeasedSends({
      dataSource: deps.dataSource,
      table: 'exchange_replies',
      columns: 'id, kind, numero, rut_destino, correos, attempts',
      settings: { ...DEFAULT_DELIVERY_SETTINGS, ...deps.settings },
      now: deps.clock ?? (() => new Date()),
      send: (d) => this.send(d),
      outcome: (d, result) => ({ id: d.id, ...result }),
      logger: deps.logger,
      log: {
        name: 'exchange reply',
        sent: (d) => ({ replyId: d.id, kind: d.kind }),
        failed: (d) => ({ replyId: d.id }),
      },
    });
  }

  /** Sends every reply now due, a batch at a time. */
  async sweep(): Promise<ExchangeReplyOutcome[]> {
    return this.queue.sweep();
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
