/** Input side of the engine: validation of emission bodies, totals, and the mapping to DteDocument. */
export * from './types';
export { isValidRut, rutCheckDigit, normalizeRut } from './rut';
export { santiagoDate, fechaEmisionWindow } from './santiago-date';
export { replaceTypographic } from './latin1';
