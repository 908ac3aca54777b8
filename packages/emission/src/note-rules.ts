import { isExportInput, type EmissionInput, type ReferenceInput } from '@dte/engine';
import type { EntityManager } from 'typeorm';
import { ApiError } from '@dte/error-catalog';

/**
 * The rules a document's references must meet when they name a document OF OURS (same
 * organization and company, found by tipo_doc_ref + folio_ref), in one place for POST /dtes and
 * POST /dtes/:id/derive (spec: Correction references, the NC/ND limits, the catalog's
 * dte.nota_credito.*, dte.reference.*, nota_previa_override_required and guia.* rows).
 *
 * Run inside the emission transaction, BEFORE the folio is taken: a refusal rolls everything back,
 * so nothing is written and no folio is used. The caller first takes `lockReferenced`, so two
 * notes over the same document cannot both pass the "previous note" rule.
 *
 * In this order, for each tax-document reference (tipo_doc_ref 30-112, folio_ref an integer):
 * 1. dte.reference.cross_env (422): the folio is not ours in this environment but is in the
 *    other one (the two environments have independent folio sequences).
 * A reference to a document that is not ours at all is not checked further (a note over a
 * document issued elsewhere is the issuer's business; the SII checks it).
 * For notes (56, 61) over a document of ours:
 * 2. 61 with cod_ref 1 or 3 more than 6 months after the referenced document's fecha_emision
 *    (Ley 21.398): dte.nota_credito.fuera_plazo (422, no override; derive: fuera_plazo with
 *    days_overdue). Decision: a text correction (cod_ref 2) moves no amount, so the limit of the
 *    law (which is about adjusting the VAT debit) does not apply to it.
 * 3. 61 over a ceded document (a row in dte_cessions): dte.nota_credito.cedida_override_required
 *    (409) unless override_cedida (derive: cedida_override_required).
 * 4. 61 with cod_ref 1 whose tax period (month of fecha_emision) is after the month following the
 *    referenced document's: dte.nota_credito.plazo_anulacion_override_required (409) unless
 *    override_plazo_anulacion (derive: plazo_anulacion_override_required with plazo_vencio_el,
 *    the last day of that following month, and days_overdue).
 * 5. any note over a document that already has an annulling (cod_ref 1) or amount-correcting
 *    (cod_ref 3) note of ours in this environment: nota_previa_override_required (409) unless
 *    override_nota_previa, with nota_previa (the latest), total_notas_previas (their number),
 *    monto_notas_previas and cobertura: completa when one annuls or the credit notes add up to
 *    the document's total, else parcial. Rejected notes (RCH/RFR/RCT/RSC) do not count.
 * Guías (52):
 * 6. a 52 with ind_traslado 7 (guía de devolución) returns the goods of a guía: a reference to
 *    any other tax document type is guia.tipo_invalido (409; goods of an invoice return with a
 *    credit note on the invoice).
 * 7. a 33/34 that invoices a guía of ours, or a 52 devolución over a guía of ours, when that guía
 *    is already invoiced by another 33/34 of ours not annulled (cod_ref 1) and not rejected:
 *    guia.ya_facturada (409; annul that invoice with a credit note first).
 */

export type RuleCodes = 'emission' | 'derive';

export interface ReferenceScope {
  organizationId: string;
  companyId: string;
  environment: 'cert' | 'prod';
}

export interface NoteOverrides {
  override_cedida?: boolean;
  override_plazo_anulacion?: boolean;
  override_nota_previa?: boolean;
}

/** sii_status of a document the SII refused: it does not exist for the rules below. */
export const REJECTED_STATUSES = ['RCH', 'RFR', 'RCT', 'RSC', 'RCO', 'RPT', 'VOF'];

const CODES: Record<RuleCodes, Record<'fuera_plazo' | 'cedida' | 'plazo_anulacion', string>> = {
  emission: {
    fuera_plazo: 'dte.nota_credito.fuera_plazo',
    cedida: 'dte.nota_credito.cedida_override_required',
    plazo_anulacion: 'dte.nota_credito.plazo_anulacion_override_required',
  },
  derive: {
    fuera_plazo: 'fuera_plazo',
    cedida: 'cedida_override_required',
    plazo_anulacion: 'plazo_anulacion_override_required',
  },
};

interface TaxReference {
  tipo: number;
  folio: number;
  codRef: number | undefined;
}

interface OurDocument {
  id: string;
  tipo_dte: number;
  folio: string;
  sii_env: string;
  fecha_emision: string;
  monto_total: string;
  sii_status: string;
  ceded: boolean;
}

interface NoteRow {
  id: string;
  tipo_dte: number;
  folio: string;
  fecha_emision: string;
  monto_total: string;
  cod_ref: string;
  created_at: Date;
}

/** References to tax documents (30-112) with an integer folio: the ones that can be ours. */
export function taxReferences(input: EmissionInput): TaxReference[] {
  if (isExportInput(input)) return [];
  const refs: ReferenceInput[] = input.references ?? [];
  const out: TaxReference[] = [];
  for (const r of refs) {
    if (typeof r.tipo_doc_ref !== 'number' || r.tipo_doc_ref < 30 || r.tipo_doc_ref > 112) continue;
    const folio = Number(r.folio_ref);
    if (!Number.isSafeInteger(folio) || folio <= 0) continue;
    out.push({ tipo: r.tipo_doc_ref, folio, codRef: r.cod_ref });
  }
  return out;
}

/**
 * Serializes documents that reference the same document of ours (advisory lock per referenced
 * tipo + folio), so the rules see every committed note. Inside the emission transaction.
 */
export async function lockReferenced(
  m: EntityManager,
  scope: ReferenceScope,
  input: EmissionInput,
): Promise<void> {
  const keys = [...new Set(taxReferences(input).map((r) => `${r.tipo}:${r.folio}`))].sort();
  for (const k of keys) {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `dte-ref:${scope.organizationId}:${scope.companyId}:${scope.environment}:${k}`,
    ]);
  }
}

async function findOurs(
  m: EntityManager,
  scope: ReferenceScope,
  tipo: number,
  folio: number,
): Promise<OurDocument[]> {
  return m.query(
    `SELECT d.id, d.tipo_dte, d.folio, d.sii_env, to_char(d.fecha_emision, 'YYYY-MM-DD') AS fecha_emision,
            d.monto_total, d.sii_status, (c.dte_id IS NOT NULL) AS ceded
       FROM dtes d LEFT JOIN dte_cessions c ON c.dte_id = d.id
      WHERE d.organization_id = $1 AND d.sii_env IN ('cert', 'prod') AND d.tipo_dte = $3 AND d.folio = $4
        AND d.company_id = $2`,
    [scope.organizationId, scope.companyId, tipo, folio],
  );
}

/**
 * Documents of ours in this environment of types `tipos` whose stored input references
 * (tipo, folio), with the cod_ref of that reference; rejected ones left out.
 */
async function referencing(
  m: EntityManager,
  scope: ReferenceScope,
  tipos: number[],
  tipo: number,
  folio: number,
): Promise<NoteRow[]> {
  return m.query(
    `SELECT d.id, d.tipo_dte, d.folio, to_char(d.fecha_emision, 'YYYY-MM-DD') AS fecha_emision,
            d.monto_total, COALESCE(r->>'cod_ref', '') AS cod_ref, d.created_at
       FROM dtes d
       CROSS JOIN LATERAL jsonb_array_elements(
         CASE WHEN jsonb_typeof(d.input->'references') = 'array' THEN d.input->'references' ELSE '[]'::jsonb END
       ) AS r
      WHERE d.organization_id = $1 AND d.company_id = $2 AND d.sii_env = $3 AND d.tipo_dte = ANY($4)
        AND NOT (d.sii_status = ANY($5))
        -- containment first (GIN index dtes_input_references_idx); folio_ref is stored as sent:
        -- a number or a digit string
        AND (d.input->'references' @> jsonb_build_array(jsonb_build_object('tipo_doc_ref', $6::int, 'folio_ref', $7::bigint))
          OR d.input->'references' @> jsonb_build_array(jsonb_build_object('tipo_doc_ref', $6::int, 'folio_ref', $7::bigint::text)))
        AND r->>'tipo_doc_ref' = $6::int::text AND r->>'folio_ref' = $7::bigint::text
      ORDER BY d.created_at, d.id`,
    [scope.organizationId, scope.companyId, scope.environment, tipos, REJECTED_STATUSES, tipo, folio],
  );
}

const DAY_MS = 86_400_000;
const dayNumber = (ymd: string) => Date.parse(`${ymd}T00:00:00Z`) / DAY_MS;
const ymd = (d: Date) => d.toISOString().slice(0, 10);

/** `date` plus `months` calendar months, the day clamped to the month's end (Aug 31 + 6 = Feb 28). */
export function addMonths(date: string, months: number): string {
  const [y, mo, d] = date.split('-').map(Number);
  const first = new Date(Date.UTC(y, mo - 1 + months, 1));
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  return ymd(new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth(), Math.min(d, last))));
}

/** Last day of the month after the month of `date` (the end of the annulment period). */
export function endOfNextMonth(date: string): string {
  const [y, mo] = date.split('-').map(Number);
  return ymd(new Date(Date.UTC(y, mo + 1, 0)));
}

function refError(code: string, message: string, detail: Record<string, unknown>, body?: string[]) {
  const bodyFields = body ? Object.fromEntries(body.map((k) => [k, detail[k]])) : undefined;
  return new ApiError(code, message, { detail, ...(bodyFields ? { bodyFields } : {}) });
}

/** Applies the rules above to `input` (see the module comment); throws the first refusal. */
export async function enforceReferenceRules(
  m: EntityManager,
  scope: ReferenceScope,
  input: EmissionInput,
  codes: RuleCodes,
): Promise<void> {
  const refs = taxReferences(input);
  if (refs.length === 0) return;
  const overrides = input as NoteOverrides;
  const c = CODES[codes];
  const isNote = input.tipo_dte === 56 || input.tipo_dte === 61;
  const fecha = input.fecha_emision;
  for (const ref of refs) {
    const found = await findOurs(m, scope, ref.tipo, ref.folio);
    const here = found.find((d) => d.sii_env === scope.environment);
    if (!here) {
      const other = found[0];
      if (other) {
        throw refError(
          'dte.reference.cross_env',
          `${ref.tipo} folio ${ref.folio} exists only in ${other.sii_env}; this document is issued in ${scope.environment}.`,
          {
            tipo_doc_ref: ref.tipo,
            folio_ref: ref.folio,
            sii_env: scope.environment,
            sii_env_referenciado: other.sii_env,
          },
        );
      }
      continue;
    }
    const referenced = { id: here.id, tipo_dte: here.tipo_dte, folio: Number(here.folio) };
    if (isNote) await noteRules(m, scope, input, ref, here, referenced, overrides, c, fecha);
    else await guiaRules(m, scope, input, ref, referenced);
  }
  if (input.tipo_dte === 52 && input.despacho.ind_traslado === 7) {
    const wrong = refs.find((r) => r.tipo !== 52);
    if (wrong) {
      throw refError(
        'guia.tipo_invalido',
        `A guía de devolución (ind_traslado 7) returns the goods of a guía (52), not of a ${wrong.tipo}: goods of an invoice return with a credit note on it.`,
        { tipo_doc_ref: wrong.tipo, folio_ref: wrong.folio, tipo_requerido: 52 },
      );
    }
  }
}

async function noteRules(
  m: EntityManager,
  scope: ReferenceScope,
  input: EmissionInput,
  ref: TaxReference,
  doc: OurDocument,
  referenced: { id: string; tipo_dte: number; folio: number },
  overrides: NoteOverrides,
  c: Record<'fuera_plazo' | 'cedida' | 'plazo_anulacion', string>,
  fecha: string,
): Promise<void> {
  if (input.tipo_dte === 61 && ref.codRef !== 2) {
    const limit = addMonths(doc.fecha_emision, 6);
    if (fecha > limit) {
      const days = dayNumber(fecha) - dayNumber(limit);
      throw refError(
        c.fuera_plazo,
        `A credit note can be issued up to 6 months after the document (Ley 21.398): ${referenced.tipo_dte} folio ${referenced.folio} of ${doc.fecha_emision} allowed it until ${limit}.`,
        { ...referencedDetail(referenced, doc), plazo_vencio_el: limit, days_overdue: days },
        ['days_overdue'],
      );
    }
  }
  if (input.tipo_dte === 61 && doc.ceded && overrides.override_cedida !== true) {
    throw refError(
      c.cedida,
      `${referenced.tipo_dte} folio ${referenced.folio} has been ceded: confirm the credit note with override_cedida true.`,
      { ...referencedDetail(referenced, doc), override: 'override_cedida' },
    );
  }
  if (input.tipo_dte === 61 && ref.codRef === 1 && overrides.override_plazo_anulacion !== true) {
    const limit = endOfNextMonth(doc.fecha_emision);
    if (fecha > limit) {
      throw refError(
        c.plazo_anulacion,
        `An annulment belongs in the tax period of the document or the next one (until ${limit}); confirm it with override_plazo_anulacion true.`,
        {
          ...referencedDetail(referenced, doc),
          plazo_vencio_el: limit,
          days_overdue: dayNumber(fecha) - dayNumber(limit),
          override: 'override_plazo_anulacion',
        },
        ['plazo_vencio_el', 'days_overdue'],
      );
    }
  }
  if (overrides.override_nota_previa !== true) {
    const previous = (await referencing(m, scope, [56, 61], ref.tipo, ref.folio)).filter(
      (n) => n.cod_ref === '1' || n.cod_ref === '3',
    );
    if (previous.length > 0) {
      const credited = previous
        .filter((n) => n.tipo_dte === 61)
        .reduce((s, n) => s + Number(n.monto_total), 0);
      const annulled = previous.some((n) => n.cod_ref === '1');
      const latest = previous[previous.length - 1];
      throw refError(
        'nota_previa_override_required',
        `${referenced.tipo_dte} folio ${referenced.folio} already has ${previous.length} annulling or amount-correcting note(s); confirm another with override_nota_previa true.`,
        {
          ...referencedDetail(referenced, doc),
          nota_previa: {
            id: latest.id,
            tipo_dte: latest.tipo_dte,
            folio: Number(latest.folio),
            cod_ref: Number(latest.cod_ref),
            fecha_emision: latest.fecha_emision,
            monto_total: Number(latest.monto_total),
          },
          total_notas_previas: previous.length,
          monto_notas_previas: credited,
          cobertura: annulled || credited >= Number(doc.monto_total) ? 'completa' : 'parcial',
          override: 'override_nota_previa',
        },
        ['nota_previa', 'total_notas_previas', 'cobertura'],
      );
    }
  }
}

async function guiaRules(
  m: EntityManager,
  scope: ReferenceScope,
  input: EmissionInput,
  ref: TaxReference,
  referenced: { id: string; tipo_dte: number; folio: number },
): Promise<void> {
  if (ref.tipo !== 52) return;
  const invoicing = input.tipo_dte === 33 || input.tipo_dte === 34;
  const returning = input.tipo_dte === 52 && input.despacho.ind_traslado === 7;
  if (!invoicing && !returning) return;
  const invoices = await referencing(m, scope, [33, 34], 52, ref.folio);
  for (const inv of invoices) {
    const annulled = (await referencing(m, scope, [61], inv.tipo_dte, Number(inv.folio))).some(
      (n) => n.cod_ref === '1',
    );
    if (annulled) continue;
    throw refError(
      'guia.ya_facturada',
      `Guía folio ${ref.folio} is already invoiced by ${inv.tipo_dte} folio ${inv.folio}; annul that invoice with a credit note first.`,
      {
        guia: referenced,
        factura: {
          id: inv.id,
          tipo_dte: inv.tipo_dte,
          folio: Number(inv.folio),
          fecha_emision: inv.fecha_emision,
        },
      },
    );
  }
}

function referencedDetail(referenced: { id: string; tipo_dte: number; folio: number }, doc: OurDocument) {
  return {
    referenciado: { ...referenced, fecha_emision: doc.fecha_emision, monto_total: Number(doc.monto_total) },
  };
}
