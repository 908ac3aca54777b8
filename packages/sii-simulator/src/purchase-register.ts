/**
 * Purchases seeded through the admin API (`POST /admin/{env}/purchases`) as the register and the
 * RCV see them: a seeded purchase is a document another issuer sent to the SII, already received
 * (its `fechaRecepcion` starts the 8-day window), so the receiver may register ACD, ERM, RCD,
 * RFP and RFT on it exactly as on a document uploaded here. Its events live on the record
 * (`events`), shared by the register WS and the RCV read.
 *
 * The RCV state of a received document (`purchaseEstado`) is the one rule both kinds share:
 * RECLAMADO after a claim, REGISTRO after ACD/ERM or once the window has passed, else PENDIENTE.
 */
import { acuseReciboDeadline } from '@dte/engine';

import type { EnvState } from './state';
import type { DocumentRecord, PurchaseRecord } from './types';

/** True once the receiver's 8-day window (civil count, Chile's calendar) has closed at `now`. */
export function windowClosed(receivedAt: number, now: number): boolean {
  return now >= acuseReciboDeadline(new Date(receivedAt)).getTime();
}
const CLAIMS = ['RCD', 'RFP', 'RFT'];

export function purchaseEstado(d: Pick<DocumentRecord, 'events' | 'receivedAt'>, now: number): string {
  const codes = d.events.map((ev) => ev.codEvento);
  if (codes.some((c) => CLAIMS.includes(c))) return 'RECLAMADO';
  if (codes.includes('ACD') || codes.includes('ERM') || windowClosed(d.receivedAt, now)) return 'REGISTRO';
  return 'PENDIENTE';
}

/** The seeded purchase as a received document (its events array is the purchase's own). */
export function seededAsDocument(env: DocumentRecord['env'], p: PurchaseRecord): DocumentRecord {
  p.events ??= [];
  const receivedAt = Date.parse(p.fechaRecepcion);
  return {
    env,
    trackId: '',
    tipoDte: p.tipoDte,
    folio: p.folio,
    rutEmisor: p.rutEmisor,
    rutReceptor: p.rutReceptor,
    fchEmis: p.fchEmis,
    mntTotal: p.mntTotal,
    mntNeto: p.mntNeto,
    mntExe: p.mntExe,
    iva: p.iva,
    result: 'ACEPTADO',
    detail: [],
    receivedAt: Number.isFinite(receivedAt) ? receivedAt : 0,
    events: p.events,
  };
}

/** The seeded purchase of that issuer, type and folio, if any. */
export function findSeededPurchase(
  e: EnvState,
  env: DocumentRecord['env'],
  rutEmisor: string,
  tipo: number,
  folio: number,
): DocumentRecord | undefined {
  const p = e.purchases.find((x) => x.rutEmisor === rutEmisor && x.tipoDte === tipo && x.folio === folio);
  return p ? seededAsDocument(env, p) : undefined;
}
