import { normalizeRut, SII_RUT } from '@dte/engine';
import {
  ExchangeReplyDelivery,
  parseCorreos,
  ReceptorDelivery,
  type DeliveryOutcome,
} from '@dte/receptor-delivery';
import type { EmissionDeps } from './deps';
import { isServiceError, ApiError } from '@dte/error-catalog';
import { validateBody } from '@dte/http-contract';
import type { DteScope } from './dte-row';
import { notSigned } from './printed-forms';
import { getDteOr404 } from './reads';

/** The intercambio sender of this api (null without SMTP_URL). */
export function receptorDelivery(deps: EmissionDeps): ReceptorDelivery | null {
  if (!deps.config.smtpUrl) return null;
  return new ReceptorDelivery({
    dataSource: deps.dataSource,
    keys: deps.keys,
    smtpUrl: deps.config.smtpUrl,
    mailFrom: deps.config.mailFrom,
    ...(deps.clock ? { clock: deps.clock } : {}),
    logger: deps.logger,
  });
}

/** The sender of the exchange replies to suppliers (null without SMTP_URL). */
export function exchangeReplyDelivery(deps: EmissionDeps): ExchangeReplyDelivery | null {
  if (!deps.config.smtpUrl) return null;
  return new ExchangeReplyDelivery({
    dataSource: deps.dataSource,
    smtpUrl: deps.config.smtpUrl,
    mailFrom: deps.config.mailFrom,
    ...(deps.clock ? { clock: deps.clock } : {}),
    logger: deps.logger,
  });
}

/**
 * Sweeps receptor deliveries and the exchange replies to suppliers every DELIVERY_INTERVAL_SEC
 * while SMTP is configured.
 */
export function startReceptorDelivery(deps: EmissionDeps): { stop(): void } {
  const sender = receptorDelivery(deps);
  const replies = exchangeReplyDelivery(deps);
  const every = deps.config.deliveryIntervalSec;
  if (!sender || !replies || every <= 0) return { stop: () => undefined };
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sender
      .sweep()
      .catch((err) => deps.logger.error({ err }, 'receptor delivery sweep failed'))
      .then(() => replies.sweep())
      .catch((err) => deps.logger.error({ err }, 'exchange reply sweep failed'))
      .finally(() => {
        running = false;
      });
  }, every * 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

export interface ResendAnswer {
  status: 200 | 202;
  body: {
    data: {
      delivery_id: string;
      state: DeliveryOutcome['state'];
      correo_receptor: string[];
      sent_at: string | null;
      last_error: string | null;
    };
  };
}

/**
 * The optional body of resend-delivery. A malformed one (a bad e-mail, an unknown field) is the
 * spec's 422 validation_error with errors[] (path, message), not the generic 400 validation_failed.
 */
export function resendBodyOf(raw: unknown): { correo_receptor?: unknown } | undefined {
  if (raw === undefined) return undefined;
  try {
    const body = validateBody<{ correo_receptor?: unknown }>('dte-resend-delivery-body.schema.json', raw);
    parseCorreos(body.correo_receptor);
    return body;
  } catch (err) {
    if (!isServiceError(err) || err.code !== 'validation_failed') throw err;
    const errors = (err.issues ?? []).map((i) => ({ path: i.path, message: i.message }));
    throw new ApiError('validation_error', 'correo_receptor must be 1-5 valid e-mail addresses.', {
      detail: { errors },
      bodyFields: { errors },
    });
  }
}

/**
 * POST /dtes/:id/resend-delivery: records a `resend` delivery to the given addresses (or the
 * emission's correo_receptor) and sends it at once; a failed attempt stays pending for the sweep.
 */
export async function resendDelivery(
  deps: EmissionDeps,
  sender: ReceptorDelivery | null,
  scope: DteScope,
  id: string,
  body: unknown,
): Promise<ResendAnswer> {
  const row = await getDteOr404(deps.dataSource, scope, id);
  if (!sender) {
    throw new ApiError('dte.resend_delivery.not_wired', 'No mail sender is configured (SMTP_URL).');
  }
  if (row.tipo_dte === 39 || row.tipo_dte === 41) {
    throw new ApiError('dte.resend_delivery.tipo_not_supported', 'Boletas are not mailed.');
  }
  const given = parseCorreos((body as { correo_receptor?: unknown } | undefined)?.correo_receptor);
  const stored: { correos: string[] | null; signed: boolean }[] = await deps.dataSource.query(
    `SELECT CASE WHEN jsonb_typeof(input->'correo_receptor') = 'array'
                 THEN ARRAY(SELECT jsonb_array_elements_text(input->'correo_receptor')) END AS correos,
            signed_xml IS NOT NULL AS signed
       FROM dtes WHERE id = $1`,
    [id],
  );
  const correos = given ?? (stored[0]?.correos?.length ? stored[0].correos : undefined);
  if (!correos) {
    if (row.sii_env === 'cert' && row.rut_receptor && normalizeRut(row.rut_receptor) === SII_RUT) {
      throw new ApiError(
        'dte.resend_delivery.no_aplica_cert',
        'A certification document addressed to the SII has no receptor mailbox; give correo_receptor.',
      );
    }
    throw new ApiError(
      'dte.resend_delivery.no_email',
      'The document has no receptor e-mail; give correo_receptor.',
    );
  }
  if (!stored[0]?.signed) {
    throw notSigned(id, 'The document is not signed yet; nothing to send.');
  }
  const inserted: { id: string }[] = await deps.dataSource.query(
    `INSERT INTO dte_deliveries (dte_id, reason, correos) VALUES ($1, 'resend', $2) RETURNING id`,
    [id, correos],
  );
  const out = await sender.sendNow(inserted[0].id);
  const rec: { sent_at: Date | null; last_error: string | null }[] = await deps.dataSource.query(
    'SELECT sent_at, last_error FROM dte_deliveries WHERE id = $1',
    [out.id],
  );
  return {
    status: out.state === 'sent' ? 200 : 202,
    body: {
      data: {
        delivery_id: out.id,
        state: out.state,
        correo_receptor: correos,
        sent_at: rec[0]?.sent_at ? new Date(rec[0].sent_at).toISOString() : null,
        last_error: rec[0]?.last_error ?? null,
      },
    },
  };
}
