/**
 * Where a send stands at a given time: "-11" until it is registered, then its intermediate
 * states one `stepMs` each, then its verdict. Computed from the clock on every query, so there
 * are no timers, and a test with zero timings sees the verdict at once.
 */
import type { Timings } from './options';
import type { UploadRecord } from './types';

export function uploadState(u: UploadRecord, now: number, t: Timings): string {
  if (u.stuck) return '-11';
  const elapsed = now - u.receivedAt;
  if (elapsed < t.registerMs) return '-11';
  if (t.stepMs <= 0) return u.verdict;
  const step = Math.floor((elapsed - t.registerMs) / t.stepMs);
  return step < u.intermediates.length ? u.intermediates[step] : u.verdict;
}

export function isFinal(u: UploadRecord, now: number, t: Timings): boolean {
  return uploadState(u, now, t) === u.verdict;
}

export const ESTADO_GLOSA: Record<string, string> = {
  REC: 'Envio Recibido',
  SOK: 'Schema Validado',
  FOK: 'Firma de Envio Validada',
  CRT: 'Caratula OK',
  PDR: 'Envio en Proceso',
  PRD: 'Envio en Proceso',
  EPR: 'Envio Procesado',
  RSC: 'Rechazado por Error en Schema',
  RFR: 'Rechazado por Error en Firma',
  RCT: 'Rechazado por Error en Caratula',
};
