/**
 * The words of the register, in one place:
 * - the SII's RCV state of a document (REGISTRO, PENDIENTE, RECLAMADO) and its register events
 *   become our `sii_estado`: claimed (any claim RCD/RFP/RFT), accepted (ACD or ERM recorded),
 *   registered (in the register, no event: on sales, or purchases after the window), pending
 *   (purchases still inside the 8-day window), not_included (listed under NO_INCLUIR: the
 *   register does not count it, so it is never shown as registered);
 * - the counterpart's events on one of OUR documents become its `receptor_estado` (spec enum
 *   reclamado, aceptado, en_plazo, aceptado_tacito, sin_info).
 */
import { withinWindow } from './deadline';

export type SiiEstado = 'registered' | 'pending' | 'claimed' | 'accepted' | 'not_included';
export type ReceptorEstado = 'reclamado' | 'aceptado' | 'en_plazo' | 'aceptado_tacito' | 'sin_info';

export const CLAIM_ACTIONS = ['RCD', 'RFP', 'RFT'] as const;
export const ACUSE_ACTIONS = ['ACD', 'ERM'] as const;
export const REGISTER_ACTIONS = [...ACUSE_ACTIONS, ...CLAIM_ACTIONS] as const;
export type RegisterAction = (typeof REGISTER_ACTIONS)[number];

export function isClaim(a: string): boolean {
  return (CLAIM_ACTIONS as readonly string[]).includes(a);
}

export function siiEstado(raw: string, eventos: readonly string[]): SiiEstado {
  if (eventos.some(isClaim) || raw.toUpperCase() === 'RECLAMADO') return 'claimed';
  if (raw.toUpperCase() === 'NO_INCLUIR') return 'not_included';
  if (eventos.includes('ACD') || eventos.includes('ERM')) return 'accepted';
  if (raw.toUpperCase() === 'PENDIENTE') return 'pending';
  return 'registered';
}

export function receptorEstado(
  inSii: boolean,
  eventos: readonly string[],
  fechaRecepcionSii: Date | null,
  now: Date,
): ReceptorEstado {
  if (!inSii) return 'sin_info';
  if (eventos.some(isClaim)) return 'reclamado';
  if (eventos.includes('ACD') || eventos.includes('ERM')) return 'aceptado';
  if (!fechaRecepcionSii) return 'sin_info';
  return withinWindow(fechaRecepcionSii, now) ? 'en_plazo' : 'aceptado_tacito';
}
