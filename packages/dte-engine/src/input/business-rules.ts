import { ServiceError } from '@dte/error-catalog';
import { Decimal } from './decimal';
import {
  EXPORT_NOTE_REFERENCE_TIPOS,
  NC_REASONS,
  NC_REASON_COD_REFS,
  NC_REFERENCE_TIPOS,
  ND_REASONS,
  ND_REASON_COD_REFS,
  ND_REFERENCE_TIPOS,
} from './references';
import { normalizeRut } from './rut';
import {
  isExportInput,
  type EmisorProfile,
  type EmissionContext,
  type EmissionInput,
  type NcReason,
  type NdReason,
  type SucursalProfile,
} from './types';

/**
 * Business rules, after the schema, each with its catalog code. In this order:
 * 1. emisor_rut_mismatch: rut_emisor is not the company's RUT.
 * 2. dte.sucursal.not_found: sucursal_id is not a current branch.
 * 3. dte.34.invalid_exenta (34 with a taxable item); dte.46.invalid_afecta (46 with an exempt item).
 * 4. references of notes (see referenceRules).
 * 5. text_correction_must_be_zero: a note with cod_ref 2 carries a non-zero amount.
 * 6. dte.52.transportista_required / conductor_required / vehiculo_required.
 * (Then, in validateEmission: amount_arithmetic, emisor.profile_incompleto and the XML text
 * rules dte.field_not_latin1 / dte.field_too_long, all from the mapping itself.)
 */
export function checkBusinessRules(input: EmissionInput, ctx: EmissionContext): void {
  if (input.rut_emisor !== undefined && input.rut_emisor !== normalizeRut(ctx.emisor.rut)) {
    throw new ServiceError('emisor_rut_mismatch', `rut_emisor ${input.rut_emisor} is not the company's RUT`, {
      detail: { rut_emisor: input.rut_emisor },
    });
  }
  if (input.sucursal_id !== undefined) requireSucursal(ctx.emisor, input.sucursal_id);
  if (!isExportInput(input)) {
    if (input.tipo_dte === 34) {
      const i = input.items.findIndex((it) => !it.exento);
      if (i >= 0) {
        throw new ServiceError(
          'dte.34.invalid_exenta',
          `a factura exenta (34) cannot carry taxable items: items[${i}]`,
          {
            detail: { field: `items[${i}].exento` },
          },
        );
      }
    }
    if (input.tipo_dte === 46) {
      const i = input.items.findIndex((it) => it.exento);
      if (i >= 0) {
        throw new ServiceError(
          'dte.46.invalid_afecta',
          `a factura de compra (46) cannot carry exempt items: items[${i}]`,
          {
            detail: { field: `items[${i}].exento` },
          },
        );
      }
    }
  }
  referenceRules(input);
  textCorrectionRule(input);
  transportRules(input);
}

/** The company's current branch `id`, else dte.sucursal.not_found. */
export function requireSucursal(emisor: EmisorProfile, id: string | number): SucursalProfile {
  const found = (emisor.sucursales ?? []).find((s) => String(s.id) === String(id));
  if (!found) {
    throw new ServiceError('dte.sucursal.not_found', `sucursal_id ${id} is not a current branch`, {
      detail: { sucursal_id: id },
    });
  }
  return found;
}

/**
 * Notes and their references:
 * - 61 references 33, 34 or 46 -> else dte.nota_credito.reference_tipo_unsupported.
 * - 56 references 33, 34, 46 or 61, only 61 with reposicion_nc_anulada -> else
 *   dte.nota_debito.reference_tipo_unsupported.
 * - a note referencing a 46 (withheld IVA) and another type -> dte.mixed_retencion_references.
 * - 61 whose references carry different cod_ref -> dte.nota_credito.invalid_cod_ref (one credit
 *   note does one thing; decision: this is the condition the catalog's invalid_cod_ref names).
 * - cod_ref 1 or 2 with several references -> dte.reference.single_required.
 * - nc_reason / nd_reason incoherent with the cod_ref -> dte.nota_credito.invalid_reason /
 *   dte.nota_debito.invalid_reason (the catalog: "outside catalog or incoherent"), detail
 *   validReasons = the reasons that fit that cod_ref.
 * - 111/112 must reference the export document they modify (110, 111 or 112) ->
 *   references_required.
 */
function referenceRules(input: EmissionInput): void {
  if (isExportInput(input)) {
    if (input.tipo_dte === 110) return;
    const refs = input.referencias ?? [];
    if (!refs.some((r) => EXPORT_NOTE_REFERENCE_TIPOS.includes(Number(r.tipo_doc_ref)))) {
      throw new ServiceError(
        'references_required',
        `an export note (${input.tipo_dte}) must reference the export document it modifies (110, 111 or 112)`,
        {
          detail: {
            tipo_dte: input.tipo_dte,
            field: 'referencias',
            requiredTipos: EXPORT_NOTE_REFERENCE_TIPOS,
          },
        },
      );
    }
    singleReference(refs.map((r) => r.codigo_ref));
    return;
  }
  if (input.tipo_dte !== 56 && input.tipo_dte !== 61) return;
  const refs = input.references ?? [];
  const nd = input.tipo_dte === 56;
  const reason = nd ? input.nd_reason : input.nc_reason;
  const allowed = nd ? (reason === 'reposicion_nc_anulada' ? [61] : ND_REFERENCE_TIPOS) : NC_REFERENCE_TIPOS;
  refs.forEach((r, i) => {
    if (typeof r.tipo_doc_ref !== 'number' || !allowed.includes(r.tipo_doc_ref)) {
      const code = nd
        ? 'dte.nota_debito.reference_tipo_unsupported'
        : 'dte.nota_credito.reference_tipo_unsupported';
      throw new ServiceError(
        code,
        `references[${i}].tipo_doc_ref ${r.tipo_doc_ref} cannot be referenced by a ${nd ? 'debit' : 'credit'} note${nd && reason === 'reposicion_nc_anulada' ? ' with reposicion_nc_anulada' : ''}`,
        {
          detail: {
            field: `references[${i}].tipo_doc_ref`,
            tipo_doc_ref: r.tipo_doc_ref,
            supported: allowed,
          },
        },
      );
    }
  });
  const withheld = refs.filter((r) => r.tipo_doc_ref === 46).length;
  if (withheld > 0 && withheld < refs.length) {
    throw new ServiceError(
      'dte.mixed_retencion_references',
      'a note cannot reference a factura de compra (46, IVA withheld) together with other documents',
      { detail: { withheld: refs.filter((r) => r.tipo_doc_ref === 46).map((r) => r.line_num) } },
    );
  }
  const cods = refs.map((r) => r.cod_ref as 1 | 2 | 3);
  if (!nd && new Set(cods).size > 1) {
    throw new ServiceError(
      'dte.nota_credito.invalid_cod_ref',
      'the references of one credit note must share one cod_ref',
      {
        detail: { cod_refs: cods },
      },
    );
  }
  singleReference(cods);
  const cod = cods[0];
  const table: Readonly<Record<string, readonly number[]>> = nd ? ND_REASON_COD_REFS : NC_REASON_COD_REFS;
  if (!table[reason as string].includes(cod)) {
    const reasons = (nd ? ND_REASONS : NC_REASONS) as readonly (NdReason | NcReason)[];
    const validReasons = reasons.filter((r) => table[r].includes(cod));
    throw new ServiceError(
      nd ? 'dte.nota_debito.invalid_reason' : 'dte.nota_credito.invalid_reason',
      `${nd ? 'nd_reason' : 'nc_reason'} "${reason}" is not coherent with cod_ref ${cod}`,
      { detail: { [nd ? 'nd_reason' : 'nc_reason']: reason, cod_ref: cod, validReasons } },
    );
  }
}

function singleReference(cods: (number | undefined)[]): void {
  if (cods.length > 1 && cods.some((c) => c === 1 || c === 2)) {
    throw new ServiceError(
      'dte.reference.single_required',
      'cod_ref 1 (annul) and 2 (text correction) admit one referenced document: issue one note per document',
      { detail: { count: cods.length } },
    );
  }
}

/** cod_ref 2 corrects text only: every amount of the note must be 0. */
function textCorrectionRule(input: EmissionInput): void {
  const cods = isExportInput(input)
    ? (input.referencias ?? []).map((r) => r.codigo_ref)
    : (input.references ?? []).map((r) => r.cod_ref);
  const isNote = [56, 61, 111, 112].includes(input.tipo_dte);
  if (!isNote || !cods.includes(2)) return;
  const nonZero = (field: string, value: number | undefined): void => {
    if (value !== undefined && !Decimal.of(value).isZero()) {
      throw new ServiceError(
        'text_correction_must_be_zero',
        `a text correction (cod_ref 2) carries no amounts, but ${field} is ${value}`,
        { detail: { field, value } },
      );
    }
  };
  input.items.forEach((item, i) => {
    nonZero(`items[${i}].precio_unitario`, item.precio_unitario);
    nonZero(`items[${i}].monto_item`, item.monto_item);
  });
  if (isExportInput(input)) {
    nonZero('monto_exento', input.monto_exento);
    nonZero('monto_total', input.monto_total);
    return;
  }
  nonZero('monto_neto', input.monto_neto);
  nonZero('monto_exento', input.monto_exento);
  nonZero('iva', input.iva);
  nonZero('monto_total', input.monto_total);
  (input.descuento_global ?? []).forEach((g, i) => nonZero(`descuento_global[${i}].valor`, g.valor));
}

/**
 * Type 52: when the emisor carries the goods (tipo_despacho 2, to the client's premises, or 3,
 * to other premises) the guide must say who drives what: transportista, conductor and vehiculo
 * are required unless transporte_sin_informacion is true. (Decision: the spec lists the
 * dte.52.*_required codes without their condition; this is the one the SII format implies,
 * since with tipo_despacho 1 the receptor transports and the emisor cannot know.)
 */
function transportRules(input: EmissionInput): void {
  if (input.tipo_dte !== 52) return;
  const d = input.despacho;
  if ((d.tipo_despacho !== 2 && d.tipo_despacho !== 3) || d.transporte_sin_informacion === true) return;
  for (const part of ['transportista', 'conductor', 'vehiculo'] as const) {
    if (d[part] === undefined) {
      throw new ServiceError(
        `dte.52.${part}_required`,
        `despacho.${part} is required when the emisor transports (tipo_despacho ${d.tipo_despacho}) unless transporte_sin_informacion is true`,
        { detail: { field: `despacho.${part}` } },
      );
    }
  }
}
