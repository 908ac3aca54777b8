import type { CommercialAlias, NcReason, NdReason } from './types';

/** nd_reason values the spec accepts on type 56. */
export const ND_REASONS: readonly NdReason[] = [
  'correccion_monto',
  'reposicion_nc_anulada',
  'interese_moratorio_contractual',
];
/** Blocked by the spec (Oficio 2011/2020): dte.nota_debito.interese_moratorio_legal. */
export const ND_REASON_BLOCKED = 'interese_moratorio_legal';

export const NC_REASONS: readonly NcReason[] = [
  'anulacion',
  'devolucion',
  'resciliacion',
  'descuento_posterior',
  'correccion_monto',
  'correccion_texto',
];

/**
 * cod_ref each reason is coherent with (1 annuls, 2 corrects text, 3 corrects amounts).
 * Decisions where the spec only says "coherent": a devolucion may return everything (1) or part
 * (3); a resciliacion dissolves the sale, so it annuls (1); reposicion_nc_anulada annuls the
 * credit note it references (1); interest and amount corrections change amounts (3).
 */
export const NC_REASON_COD_REFS: Readonly<Record<NcReason, readonly (1 | 2 | 3)[]>> = {
  anulacion: [1],
  devolucion: [1, 3],
  resciliacion: [1],
  descuento_posterior: [3],
  correccion_monto: [3],
  correccion_texto: [2],
};
export const ND_REASON_COD_REFS: Readonly<Record<NdReason, readonly (1 | 2 | 3)[]>> = {
  correccion_monto: [3],
  reposicion_nc_anulada: [1],
  interese_moratorio_contractual: [3],
};

/** Types a credit note (61) may reference. */
export const NC_REFERENCE_TIPOS: readonly number[] = [33, 34, 46];
/** Types a debit note (56) may reference; with reposicion_nc_anulada only 61. */
export const ND_REFERENCE_TIPOS: readonly number[] = [33, 34, 46, 61];
/** Types an export note (111, 112) must reference at least once: the export document it modifies. */
export const EXPORT_NOTE_REFERENCE_TIPOS: readonly number[] = [110, 111, 112];

/** Aliases of commercial references on 33/34 and the <TpoDocRef> code each stands for. */
const ALIASES: Readonly<Record<CommercialAlias, string>> = {
  orden_compra: '801',
  contrato: '803',
  hes: 'HES',
  HES: 'HES',
  HEM: 'HEM',
};

/** The <TpoDocRef> text of a reference's tipo_doc_ref (number or alias). */
export function tpoDocRefCode(tipo: number | string): string {
  if (typeof tipo === 'number') return String(tipo);
  return ALIASES[tipo as CommercialAlias] ?? tipo;
}

export const NOTE_TYPES: readonly number[] = [56, 61, 111, 112];
