/** Input side of the engine: validation of emission bodies, totals, and the mapping to DteDocument. */
export * from './types';
export { validateEmission, validateEmissionDraft, type ValidatedEmission } from './validate';
export { buildDocument, DOCUMENT_FOLIO_PATH, type BuildContext } from './build-document';
export {
  computeTotals,
  assertDeclaredAmounts,
  needsExchangeRate,
  isWithheld,
  TASA_IVA,
  TIPO_IMP_IVA_RETENIDO_TOTAL,
  type Totals,
  type LineTotals,
} from './totals';
export { isValidRut, rutCheckDigit, normalizeRut } from './rut';
export {
  santiagoDate,
  fechaEmisionWindow,
  santiagoDayEnd,
  santiagoInstant,
  santiagoWallClockAsUtc,
  acuseReciboDeadline,
  ACUSE_PLAZO_DIAS,
} from './santiago-date';
export { replaceTypographic } from './latin1';
export { emissionSchemas, createEmissionAjv } from './schemas';
export { DTE_ENDPOINT_TIPOS } from './prechecks';
export { computeBoletaTotals, type BoletaItemInput, type BoletaTotals } from './boleta';
