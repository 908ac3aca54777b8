/**
 * The receiver's legal window (Ley 19.983 art. 4, as amended by Ley 20.956): eight calendar days
 * following the SII's reception of the document to accept it or claim it; after that it is taken
 * as accepted ("aceptación tácita") and the register answers codResp 8. The days are counted as
 * the civil code counts terms (art. 48): whole days of Chile's calendar, to midnight of the last
 * one. Received on day D at any hour, the window closes when D + 8 ends in America/Santiago
 * (`acuseReciboDeadline` of the engine; the simulator applies the same rule).
 */
import { acuseReciboDeadline, santiagoDate } from '@dte/engine';

export interface PlazoLegal {
  /** ISO instant the SII received the document; null when unknown */
  fecha_recepcion_sii: string | null;
  /** ISO instant the window closes (midnight, Chile, ending the 8th day); null when unknown */
  vence: string | null;
  /** calendar days left in Chile (0 on the last day), null when unknown */
  dias_restantes: number | null;
  en_plazo: boolean | null;
}

export function plazoLegal(fechaRecepcionSii: Date | null, now: Date): PlazoLegal {
  if (!fechaRecepcionSii || Number.isNaN(fechaRecepcionSii.getTime()))
    return { fecha_recepcion_sii: null, vence: null, dias_restantes: null, en_plazo: null };
  const vence = acuseReciboDeadline(fechaRecepcionSii);
  const open = now.getTime() < vence.getTime();
  const lastDay = santiagoDate(new Date(vence.getTime() - 1));
  const today = santiagoDate(now);
  const days = Math.round(
    (Date.parse(`${lastDay}T00:00:00Z`) - Date.parse(`${today}T00:00:00Z`)) / 86_400_000,
  );
  return {
    fecha_recepcion_sii: fechaRecepcionSii.toISOString(),
    vence: vence.toISOString(),
    dias_restantes: open ? Math.max(days, 0) : 0,
    en_plazo: open,
  };
}

/** True while an acuse or claim may still be registered. */
export function withinWindow(fechaRecepcionSii: Date | null, now: Date): boolean {
  return plazoLegal(fechaRecepcionSii, now).en_plazo === true;
}
