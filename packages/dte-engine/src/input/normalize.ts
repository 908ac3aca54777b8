import type { TipoDte } from '../model';
import { replaceTypographic } from './latin1';
import { normalizeRut } from './rut';
import { santiagoDate } from './santiago-date';
import type { EmissionInput } from './types';

/** Generic foreign customer of export documents (spec: receptor.rut default). */
export const RUT_EXTRANJERO = '55555555-5';

/** A deep copy of the body with every string trimmed (before the schema: "trimmed, not empty"). */
export function trimStrings<T>(value: T): T {
  if (typeof value === 'string') return value.trim() as T;
  if (Array.isArray(value)) return value.map((v) => trimStrings(v)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trimStrings(v)])) as T;
  }
  return value;
}

function replaceAll<T>(value: T): T {
  if (typeof value === 'string') return replaceTypographic(value) as T;
  if (Array.isArray(value)) return value.map((v) => replaceAll(v)) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceAll(v)])) as T;
  }
  return value;
}

/**
 * After the schema: the spec's typographic replacements on every text (so what is stored is
 * what goes into the XML), defaults (fecha_emision = today in America/Santiago; export
 * receptor.rut = 55555555-5) and RUTs in the SII form (upper-case K, no leading zeros).
 */
export function normalizeInput(data: Record<string, unknown>, now: Date): EmissionInput {
  const input = replaceAll(data) as unknown as EmissionInput & Record<string, unknown>;
  if (input.fecha_emision === undefined) input.fecha_emision = santiagoDate(now);
  if (typeof input.rut_emisor === 'string') input.rut_emisor = normalizeRut(input.rut_emisor);
  const tipo = input.tipo_dte as TipoDte;
  if (tipo === 110 || tipo === 111 || tipo === 112) {
    const receptor = (input as { receptor: { rut?: string } }).receptor;
    receptor.rut = normalizeRut(receptor.rut ?? RUT_EXTRANJERO);
    const aduana = (input as { aduana?: { rut_cia_transp?: string } }).aduana;
    if (aduana?.rut_cia_transp) aduana.rut_cia_transp = normalizeRut(aduana.rut_cia_transp);
  } else {
    const domestic = input as { receptor: { rut: string }; despacho?: Record<string, { rut: string }> };
    domestic.receptor.rut = normalizeRut(domestic.receptor.rut);
    for (const who of ['transportista', 'conductor']) {
      const party = domestic.despacho?.[who];
      if (party) party.rut = normalizeRut(party.rut);
    }
  }
  return input;
}
