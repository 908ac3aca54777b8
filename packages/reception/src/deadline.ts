/**
 * The receiver's legal window (Ley 19.983 art. 3, as amended by Ley 20.956): eight days from the
 * SII's reception of the document to accept it or claim it; after that it is taken as accepted
 * ("aceptación tácita") and the register answers codResp 8. The SII counts from its reception
 * date-time, so the deadline is that instant plus 8 × 24 h (the simulator applies the same rule).
 */
export const PLAZO_LEGAL_MS = 8 * 86_400_000;

export interface PlazoLegal {
  /** ISO instant the SII received the document; null when unknown */
  fecha_recepcion_sii: string | null;
  /** ISO instant the window closes; null when the reception date is unknown */
  vence: string | null;
  /** whole days left (0 on the last day), null when unknown */
  dias_restantes: number | null;
  en_plazo: boolean | null;
}

export function plazoLegal(fechaRecepcionSii: Date | null, now: Date): PlazoLegal {
  if (!fechaRecepcionSii || Number.isNaN(fechaRecepcionSii.getTime()))
    return { fecha_recepcion_sii: null, vence: null, dias_restantes: null, en_plazo: null };
  const vence = new Date(fechaRecepcionSii.getTime() + PLAZO_LEGAL_MS);
  const left = vence.getTime() - now.getTime();
  return {
    fecha_recepcion_sii: fechaRecepcionSii.toISOString(),
    vence: vence.toISOString(),
    dias_restantes: left < 0 ? 0 : Math.floor(left / 86_400_000),
    en_plazo: left >= 0,
  };
}

/** True while an acuse or claim may still be registered. */
export function withinWindow(fechaRecepcionSii: Date | null, now: Date): boolean {
  return plazoLegal(fechaRecepcionSii, now).en_plazo === true;
}
