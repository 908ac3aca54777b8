import type { DataSource } from 'typeorm';
import type { Principal } from '@dte/tenancy';
import { isUuid } from '@dte/database';
import { ApiError } from '@dte/error-catalog';
import type { BacklogGate } from './backlog-gate';
import { emitDte, type EmissionResult } from './emission';
import type { ExchangeRateSource } from './exchange-rate';

export const DERIVE_ACTIONS = ['copy', 'anular', 'corregir-nc', 'corregir-nd', 'corregir-texto'] as const;
export type DeriveAction = (typeof DERIVE_ACTIONS)[number];

/** Types `copy` reuses as a template (document.not_templatable otherwise). */
export const TEMPLATABLE_TIPOS = [33, 34];

/** POST /dtes/:id/derive body (schemas/http/dte-derive-body.schema.json). */
export interface DeriveBody {
  action: string;
  override_cedida?: boolean;
  override_plazo_anulacion?: boolean;
  override_nota_previa?: boolean;
  razon_ref?: string;
  items?: unknown[];
  nc_reason?: string;
  nd_reason?: string;
  fecha_emision?: string;
  correo_receptor?: string[] | null;
}

interface Original {
  id: string;
  tipo_dte: number;
  folio: string;
  fecha_emision: string;
  input: Record<string, unknown>;
}

const DEFAULT_RAZON: Record<Exclude<DeriveAction, 'copy'>, string> = {
  anular: 'Anula documento',
  'corregir-texto': 'Corrige texto',
  'corregir-nc': 'Corrige montos',
  'corregir-nd': 'Corrige montos',
};

/** Fields of the original body a note does not carry over (its own amounts, payment, references). */
const NOT_CARRIED = [
  'tipo_dte',
  'fecha_emision',
  'forma_pago',
  'pagos',
  'references',
  'monto_neto',
  'monto_exento',
  'iva',
  'monto_total',
  'nc_reason',
  'nd_reason',
  'override_cedida',
  'override_plazo_anulacion',
  'override_nota_previa',
  'correo_receptor',
  'certificate_id',
  'sii_env',
];

async function original(db: DataSource, principal: Principal, id: string): Promise<Original> {
  const rows: Original[] = isUuid(id)
    ? await db.query(
        `SELECT id, tipo_dte, folio, to_char(fecha_emision, 'YYYY-MM-DD') AS fecha_emision, input FROM dtes
          WHERE id = $1 AND organization_id = $2 AND sii_env = $3 AND ($4::uuid IS NULL OR company_id = $4)`,
        [id, principal.organizationId, principal.environment, principal.companyId],
      )
    : [];
  if (!rows[0]) throw new ApiError('document.not_found', 'No such document in this organization.');
  return rows[0];
}

/**
 * The emission body `action` builds from the original document (its stored body):
 * - copy (33/34 only): the same body, dated today unless fecha_emision is given;
 * - anular: a 61 with cod_ref 1 and nc_reason anulacion over the original's items, receptor and
 *   global discounts (its full amounts); over a credit note (61) a 56 with cod_ref 1 and
 *   nd_reason reposicion_nc_anulada (the spec's only reference of a 56 to a 61);
 * - corregir-texto: a 61 with cod_ref 2, nc_reason correccion_texto and zero amounts (the given
 *   items, else one line carrying razon_ref);
 * - corregir-nc / corregir-nd: a 61 / 56 with cod_ref 3 over the given items, nc_reason /
 *   nd_reason given or correccion_monto.
 * The reference is the original: tipo_doc_ref, folio_ref, fecha_ref = its fecha_emision.
 * Everything else (validation, the rules of note-rules.ts) happens in emission, as for POST /dtes.
 */
export function deriveBody(orig: Original, req: DeriveBody): Record<string, unknown> {
  const action = req.action as DeriveAction;
  const src = orig.input;
  if ((action === 'copy' || action === 'anular') && req.items !== undefined) {
    // a copy repeats the document and an annulment (cod_ref 1) undoes all of it: both carry the
    // original's items; a partial credit is corregir-nc
    throw new ApiError('validation_failed', `${action} carries the original's items; send none.`, {
      issues: [{ path: '/items', message: `is not accepted with action ${action}` }],
    });
  }
  const dated = req.fecha_emision ? { fecha_emision: req.fecha_emision } : {};
  const mail = req.correo_receptor !== undefined ? { correo_receptor: req.correo_receptor } : {};
  if (action === 'copy') {
    if (!TEMPLATABLE_TIPOS.includes(orig.tipo_dte)) {
      throw new ApiError(
        'document.not_templatable',
        `Only facturas 33 and 34 are reused as templates; this document is a ${orig.tipo_dte}.`,
        { detail: { tipo_dte: orig.tipo_dte, templatable: TEMPLATABLE_TIPOS } },
      );
    }
    const { fecha_emision: _f, ...rest } = src;
    void _f;
    return { ...rest, ...dated, ...mail };
  }
  const carried = Object.fromEntries(Object.entries(src).filter(([k]) => !NOT_CARRIED.includes(k)));
  const overrides = Object.fromEntries(
    (['override_cedida', 'override_plazo_anulacion', 'override_nota_previa'] as const)
      .filter((k) => req[k] === true)
      .map((k) => [k, true]),
  );
  const razon = (req.razon_ref ?? DEFAULT_RAZON[action]).slice(0, 90);
  let tipo: 56 | 61;
  let codRef: 1 | 2 | 3;
  let reason: Record<string, string>;
  let items: unknown[];
  let descuentos: Record<string, unknown> = {};
  switch (action) {
    case 'anular':
      if (orig.tipo_dte === 61) {
        tipo = 56;
        reason = { nd_reason: 'reposicion_nc_anulada' };
      } else {
        tipo = 61;
        reason = { nc_reason: 'anulacion' };
      }
      codRef = 1;
      items = src.items as unknown[];
      descuentos = src.descuento_global === undefined ? {} : { descuento_global: src.descuento_global };
      break;
    case 'corregir-texto':
      tipo = 61;
      codRef = 2;
      reason = { nc_reason: 'correccion_texto' };
      items = req.items ?? [
        { nombre: razon.slice(0, 80), cantidad: 1, precio_unitario: 0, exento: false, monto_item: 0 },
      ];
      break;
    case 'corregir-nc':
    case 'corregir-nd':
      tipo = action === 'corregir-nc' ? 61 : 56;
      codRef = 3;
      reason =
        action === 'corregir-nc'
          ? { nc_reason: req.nc_reason ?? 'correccion_monto' }
          : { nd_reason: req.nd_reason ?? 'correccion_monto' };
      if (!req.items) {
        throw new ApiError('validation_failed', `${action} needs the items (amounts) of the correction.`, {
          issues: [{ path: '/items', message: `is required with action ${action}` }],
        });
      }
      items = req.items;
      break;
    default:
      throw new ApiError('invalid_action', `Unknown action ${String(req.action)}.`, {
        detail: { action: req.action, actions: DERIVE_ACTIONS },
      });
  }
  const { descuento_global: _d, ...base } = carried;
  void _d;
  return {
    ...base,
    tipo_dte: tipo,
    ...dated,
    ...mail,
    ...reason,
    items,
    ...descuentos,
    references: [
      {
        line_num: 1,
        tipo_doc_ref: orig.tipo_dte,
        folio_ref: Number(orig.folio),
        fecha_ref: orig.fecha_emision,
        cod_ref: codRef,
        razon_ref: razon,
      },
    ],
    ...overrides,
  };
}

/**
 * The emission body a derivation would issue: unknown action → invalid_action; the original
 * (404 document.not_found, also for another organization's); then deriveBody. Also what an
 * approval summary describes before anything is issued.
 */
export async function derivedEmissionBody(
  db: DataSource,
  principal: Principal,
  id: string,
  req: DeriveBody,
): Promise<Record<string, unknown>> {
  if (!(DERIVE_ACTIONS as readonly string[]).includes(req.action)) {
    throw new ApiError('invalid_action', `Unknown action ${String(req.action)}.`, {
      detail: { action: req.action, actions: DERIVE_ACTIONS },
    });
  }
  return deriveBody(await original(db, principal, id), req);
}

/**
 * POST /dtes/:id/derive: unknown action → invalid_action; the original (404 document.not_found,
 * also for another organization's); the new body (deriveBody); then THE emission path (emitDte:
 * idempotency, validation, note rules with derive's codes, folio, outbox, pipeline).
 */
export async function deriveDte(
  db: DataSource,
  principal: Principal,
  id: string,
  req: { body: DeriveBody; idempotencyKey: string | undefined; certIdHeader: string | undefined },
  now: Date,
  opts: { rates?: ExchangeRateSource; backlog?: BacklogGate } = {},
): Promise<EmissionResult & { body: Record<string, unknown> }> {
  const body = await derivedEmissionBody(db, principal, id, req.body);
  const out = await emitDte(
    db,
    principal,
    { body, idempotencyKey: req.idempotencyKey, certIdHeader: req.certIdHeader },
    now,
    { ...opts, ruleCodes: 'derive' },
  );
  return { ...out, body };
}
