import { ServiceError } from '@dte/error-catalog';
import type { TipoDte } from '../model';
import { validationFailed } from './errors';
import { NC_REASONS, ND_REASONS, ND_REASON_BLOCKED, NOTE_TYPES } from './references';
import type { EmissionShape } from './schemas';

/** Every document type the engine knows; the spec's tipo_dte enum of POST /dtes plus 111. */
const KNOWN_TIPOS: readonly TipoDte[] = [33, 34, 39, 41, 46, 52, 56, 61, 110, 111, 112];
/** POST /dtes (spec, Endpoints): 33, 34, 46, 52, 56, 61, 110, 112. */
export const DTE_ENDPOINT_TIPOS: readonly TipoDte[] = [33, 34, 46, 52, 56, 61, 110, 112];
export const MAX_ITEMS = 60;

type Body = Record<string, unknown>;

function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function shapeOf(tipo: TipoDte): EmissionShape {
  if (tipo === 52) return 'guiaDespacho';
  if (tipo === 110 || tipo === 111 || tipo === 112) return 'export';
  if (tipo === 39 || tipo === 41) return 'boleta';
  return 'dte';
}

/**
 * Checks that run BEFORE the JSON Schema, on the raw body, because each has its own catalog
 * code that a generic schema error would otherwise hide (the schemas still state these bounds,
 * for the OpenAPI document). They look only at the fields they concern and tolerate any other
 * shape. In this order:
 *
 * 1. not an object -> validation_failed; tipo_dte missing or unknown -> validation_failed at
 *    tipo_dte; 39/41 (boletas have their own endpoint) or a known type the calling path does
 *    not take (111 on POST /dtes) -> dte.tipo_not_supported.
 * 2. items an empty array -> items_empty; more than 60 -> items_exceed_max (detail.count). The
 *    catalog has codes for exactly these conditions, so they win over minItems/maxItems.
 *    (items missing or not an array stays a validation_failed.)
 * 3. type 52 without despacho -> dte.52.dispatch_required.
 * 4. notes (56, 61, 111, 112) without references (missing or empty) -> references_required.
 * 5. cod_ref outside 1/2/3 -> reference_invalid_cod_ref. On notes cod_ref is required, so a
 *    missing one is "outside 1/2/3" too; on other types it is only checked when present.
 * 6. type 56: nd_reason interese_moratorio_legal -> dte.nota_debito.interese_moratorio_legal;
 *    missing or outside the catalog -> dte.nota_debito.invalid_reason (detail.validReasons).
 * 7. type 61: nc_reason missing or outside the catalog -> dte.nota_credito.invalid_reason.
 */
export function precheck(body: unknown, tipos: readonly TipoDte[]): { tipo: TipoDte; shape: EmissionShape } {
  if (!isObject(body)) throw validationFailed([{ path: '', message: 'must be a JSON object' }]);
  const tipo = body.tipo_dte;
  if (typeof tipo !== 'number' || !KNOWN_TIPOS.includes(tipo as TipoDte)) {
    const message =
      tipo === undefined ? 'is required' : `must be one of ${JSON.stringify(DTE_ENDPOINT_TIPOS)}`;
    throw validationFailed([{ path: 'tipo_dte', message }]);
  }
  const tipoDte = tipo as TipoDte;
  if (tipoDte === 39 || tipoDte === 41 || !tipos.includes(tipoDte)) {
    const why = tipoDte === 39 || tipoDte === 41 ? 'boletas are issued through /boletas' : 'not on this path';
    throw new ServiceError('dte.tipo_not_supported', `tipo_dte ${tipoDte} is not supported here (${why})`, {
      detail: { tipo_dte: tipoDte, supported: tipos.filter((t) => t !== 39 && t !== 41) },
    });
  }

  const items = body.items;
  if (Array.isArray(items)) {
    if (items.length === 0) throw new ServiceError('items_empty', 'items must hold at least one item');
    if (items.length > MAX_ITEMS) {
      throw new ServiceError('items_exceed_max', `items holds ${items.length} items; at most ${MAX_ITEMS}`, {
        detail: { count: items.length, max: MAX_ITEMS },
      });
    }
  }

  if (tipoDte === 52 && (body.despacho === undefined || body.despacho === null)) {
    throw new ServiceError('dte.52.dispatch_required', 'a guia de despacho (52) needs the despacho block');
  }

  const isExport = shapeOf(tipoDte) === 'export';
  const refsKey = isExport ? 'referencias' : 'references';
  const codKey = isExport ? 'codigo_ref' : 'cod_ref';
  const refs = body[refsKey];
  const isNote = NOTE_TYPES.includes(tipoDte);
  if (isNote && (refs === undefined || refs === null || (Array.isArray(refs) && refs.length === 0))) {
    throw new ServiceError('references_required', `tipo_dte ${tipoDte} requires ${refsKey} (at least one)`, {
      detail: { tipo_dte: tipoDte, field: refsKey },
    });
  }
  if (Array.isArray(refs)) {
    refs.forEach((ref, i) => {
      if (!isObject(ref)) return;
      const cod = ref[codKey];
      if ((isNote || cod !== undefined) && cod !== 1 && cod !== 2 && cod !== 3) {
        const field = `${refsKey}[${i}].${codKey}`;
        throw new ServiceError(
          'reference_invalid_cod_ref',
          `${field} must be 1 (annuls), 2 (corrects text) or 3 (corrects amounts)${cod === undefined ? '; it is required on notes' : ''}`,
          { detail: { field, value: cod === undefined ? null : cod } },
        );
      }
    });
  }

  if (tipoDte === 56) {
    const reason = body.nd_reason;
    if (reason === ND_REASON_BLOCKED) {
      throw new ServiceError(
        'dte.nota_debito.interese_moratorio_legal',
        'a debit note for legal late-payment interest (interese_moratorio_legal) is blocked; see Oficio 2011/2020',
        { detail: { nd_reason: reason } },
      );
    }
    if (typeof reason !== 'string' || !(ND_REASONS as readonly string[]).includes(reason)) {
      throw new ServiceError(
        'dte.nota_debito.invalid_reason',
        reason === undefined
          ? 'nd_reason is required on a debit note (56)'
          : `nd_reason "${String(reason)}" is not valid`,
        { detail: { nd_reason: reason ?? null, validReasons: [...ND_REASONS] } },
      );
    }
  }
  if (tipoDte === 61) {
    const reason = body.nc_reason;
    if (typeof reason !== 'string' || !(NC_REASONS as readonly string[]).includes(reason)) {
      throw new ServiceError(
        'dte.nota_credito.invalid_reason',
        reason === undefined
          ? 'nc_reason is required on a credit note (61)'
          : `nc_reason "${String(reason)}" is not valid`,
        { detail: { nc_reason: reason ?? null, validReasons: [...NC_REASONS] } },
      );
    }
  }
  return { tipo: tipoDte, shape: shapeOf(tipoDte) };
}
