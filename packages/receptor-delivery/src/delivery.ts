import { buildEnvioDte } from '@dte/engine';
import { ServiceError } from '@dte/error-catalog';
import { renderSignedDte } from '@dte/printed-form';
import { StoredCredentials, type KeyWrapper } from '@dte/secrets';
import { classify, KNOWN_STATUSES } from '@dte/status';
import nodemailer from 'nodemailer';
import type { DataSource } from 'typeorm';

import { DEFAULT_DELIVERY_SETTINGS, LeasedSends, type DeliverySettings } from './leased-sends';

/** Statuses after which the receptor gets its copy (the SII accepted the document). */
export const ACCEPTED_STATUSES: readonly string[] = KNOWN_STATUSES.filter(
  (s) => classify(s).categoria === 'aceptado',
);

export interface DeliveryDeps {
  dataSource: DataSource;
  keys: KeyWrapper;
  smtpUrl: string;
  mailFrom: string;
  clock?: () => Date;
  settings?: Partial<DeliverySettings>;
  logger?: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

interface DueRow {
  id: string;
  dte_id: string;
  correos: string[];
  attempts: number;
}

export interface DeliveryOutcome {
  id: string;
  dteId: string;
  state: 'sent' | 'pending' | 'failed';
  error?: string;
}

/**
 * Intercambio e-mails to receptors. `sweep()` records a delivery for every accepted document
 * whose emission carried `correo_receptor` and has none yet, then sends the due ones: an
 * EnvioDTE addressed to the receptor (Carátula RutReceptor), signed with the document's
 * certificate, and the printed form, as attachments of one mail. Failures are retried with
 * backoff; each attempt is recorded (attempts, last_error, sent_at, message_id).
 */
export class ReceptorDelivery {
  private readonly credentials: StoredCredentials;
  private readonly now: () => Date;
  private readonly queue: LeasedSends<DueRow, DeliveryOutcome>;

  constructor(private readonly deps: DeliveryDeps) {
    const settings: DeliverySettings = { ...DEFAULT_DELIVERY_SETTINGS, ...deps.settings };
    this.now = deps.clock ?? (() => new Date());
    this.credentials = new StoredCredentials({
      db: deps.dataSource,
      keys: deps.keys,
      now: () => this.now().getTime(),
    });
    this.queue = new LeasedSends({
      dataSource: deps.dataSource,
      table: 'dte_deliveries',
      columns: 'id, dte_id, correos, attempts',
      settings,
      now: this.now,
      send: (d) => this.send(d),
      outcome: (d, result) => ({ id: d.id, dteId: d.dte_id, ...result }),
      logger: deps.logger,
      log: {
        name: 'receptor delivery',
        sent: (d) => ({ deliveryId: d.id, dteId: d.dte_id }),
        failed: (d) => ({ deliveryId: d.id, dteId: d.dte_id }),
      },
    });
  }

  /** Records the emission deliveries now due (accepted documents with correo_receptor). */
  async enqueueAccepted(): Promise<number> {
    const rows: unknown[] = await this.deps.dataSource.query(
      `INSERT INTO dte_deliveries (dte_id, reason, correos, next_attempt_at)
       SELECT d.id, 'emission', ARRAY(SELECT jsonb_array_elements_text(d.input->'correo_receptor')), $2
         FROM dtes d
        WHERE d.sii_status = ANY($1::text[]) AND d.signed_xml IS NOT NULL
          AND jsonb_typeof(d.input->'correo_receptor') = 'array'
          AND jsonb_array_length(d.input->'correo_receptor') BETWEEN 1 AND 5
          AND NOT EXISTS (SELECT 1 FROM dte_deliveries x WHERE x.dte_id = d.id AND x.reason = 'emission')
       ON CONFLICT DO NOTHING
       RETURNING id`,
      [ACCEPTED_STATUSES, this.now()],
    );
    return rows.length;
  }

  /** One pass: enqueue, then send what is due. */
  async sweep(): Promise<DeliveryOutcome[]> {
    await this.enqueueAccepted();
    return this.queue.sweep();
  }

  /** Sends one delivery now (resend on demand), whatever its schedule; answers its outcome. */
  async sendNow(deliveryId: string): Promise<DeliveryOutcome> {
    return this.queue.sendNow(deliveryId);
  }

  /** Builds the EnvioDTE for the receptor and the PDF, and mails both; answers the Message-ID. */
  private async send(d: DueRow): Promise<string> {
    const db = this.deps.dataSource;
    const rows: {
      signed_xml: string;
      certificate_id: string;
      company_id: string;
      sii_env: 'cert' | 'prod';
      rut_emisor: string;
      rut_receptor: string | null;
      tipo_dte: number;
      folio: string;
      razon_social: string;
      sii_oficina: string | null;
      comuna: string | null;
      numero: number | null;
      fecha: string | null;
      prod_numero: number | null;
      prod_fecha: string | null;
    }[] = await db.query(
      `SELECT d.signed_xml, d.certificate_id, d.company_id, d.sii_env, d.rut_emisor, d.rut_receptor, d.tipo_dte,
              d.folio, c.razon_social, c.sii_oficina, c.comuna,
              c.resolucion_cert_numero AS numero, to_char(c.resolucion_cert_fecha, 'YYYY-MM-DD') AS fecha,
              c.resolucion_prod_numero AS prod_numero, to_char(c.resolucion_prod_fecha, 'YYYY-MM-DD') AS prod_fecha
         FROM dtes d JOIN companies c ON c.id = d.company_id WHERE d.id = $1`,
      [d.dte_id],
    );
    const r = rows[0];
    if (!r?.signed_xml) throw new Error('the document has no signed XML');
    const numero = r.sii_env === 'prod' ? r.prod_numero : r.numero;
    const fecha = r.sii_env === 'prod' ? r.prod_fecha : r.fecha;
    if (numero === null || fecha === null)
      throw new Error(`the company has no SII resolution for ${r.sii_env}`);
    if (!r.rut_receptor) throw new Error('the document has no receptor RUT to address the EnvioDTE to');
    const credential = await this.credentials.get(r.certificate_id);
    const envio = buildEnvioDte([r.signed_xml], {
      rutEmisor: r.rut_emisor,
      rutEnvia: credential.info.rut,
      rutReceptor: r.rut_receptor,
      fchResol: fecha,
      nroResol: numero,
      credential,
      timestamp: this.now(),
    });
    const pdf = await renderSignedDte(r.signed_xml, {
      oficinaSii: (r.sii_oficina ?? r.comuna ?? '').toUpperCase(),
      resolucion: { numero, fecha },
    });
    const name = `DTE_${r.rut_emisor}_T${r.tipo_dte}F${r.folio}`;
    const transport = nodemailer.createTransport(this.deps.smtpUrl);
    try {
      const info = await transport.sendMail({
        from: this.deps.mailFrom,
        // each one mailbox (an address object is not re-parsed into several), at most 5
        to: receptorMailboxes(d.correos),
        subject: `EnvioDTE: ${r.rut_emisor} tipo ${r.tipo_dte} folio ${r.folio}`,
        text: `${r.razon_social} (${r.rut_emisor}) le envía el documento tributario electrónico tipo ${r.tipo_dte} folio ${r.folio}: el XML (EnvioDTE) y su representación impresa.`,
        attachments: [
          { filename: `${name}.xml`, content: envio, contentType: 'application/xml; charset=ISO-8859-1' },
          { filename: `${name}.pdf`, content: pdf, contentType: 'application/pdf' },
        ],
      });
      return info.messageId;
    } finally {
      transport.close();
    }
  }
}

/** Addresses of POST /dtes/:id/resend-delivery: 1-5, each at most 200 characters (spec, Limits). */
/**
 * One mailbox, nothing a mail library would read as several: a dot-atom local part and a domain
 * of labels (the rule of the emission schema's `format: email`), at most 200 characters. No
 * comma, semicolon, quote, angle bracket, colon or space: `a,b,c,d,e,f@x.cl` would otherwise be
 * one "address" that nodemailer splits into six recipients, past the bound of 5.
 */
export function isReceptorEmail(c: string): boolean {
  return (
    c.length <= 200 &&
    /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i.test(
      c,
    )
  );
}

export function parseCorreos(raw: unknown): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const list = Array.isArray(raw) ? raw : [raw];
  const ok =
    list.length >= 1 && list.length <= 5 && list.every((c) => typeof c === 'string' && isReceptorEmail(c));
  if (!ok) {
    throw new ServiceError(
      'validation_failed',
      'correo_receptor must be 1-5 e-mail addresses of at most 200 characters.',
      {
        issues: [{ path: 'correo_receptor', message: '1-5 e-mail addresses, each at most 200 characters' }],
      },
    );
  }
  return list as string[];
}

/** The stored addresses as mailboxes to send to: 1-5, each one mailbox, or the attempt fails. */
function receptorMailboxes(correos: string[]): { name: string; address: string }[] {
  if (correos.length < 1 || correos.length > 5 || !correos.every(isReceptorEmail)) {
    throw new Error('the delivery holds an address that is not one mailbox, or more than 5: not sent');
  }
  return correos.map((address) => ({ name: '', address }));
}
