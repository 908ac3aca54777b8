/**
 * The `cesion` block of a reception document (spec: estado cedida, no_cedida or indeterminado;
 * assignee data only with current evidence; `consultadoAl`; a reason when it cannot be
 * confirmed). The evidence is what the SII said about a transfer in the last RCV sync
 * (`cesion` of the compras row: an object, or null for "none known").
 *
 * - no issue date → indeterminado, `fecha_emision_desconocida` (a transfer is sought by the
 *   document's identity, which includes the date);
 * - never asked to the SII (a document only from an intercambio envelope) → indeterminado,
 *   `sin_consulta_sii`;
 * - the SII's answer older than CESION_EVIDENCE_MAX_AGE_MS → indeterminado, `consulta_vencida`
 *   (a document may be transferred any day: an old "no" or an old assignee is not current);
 * - otherwise cedida with the assignee, or no_cedida.
 */
export const CESION_EVIDENCE_MAX_AGE_MS = 24 * 3_600_000;

export type CesionEstado = 'cedida' | 'no_cedida' | 'indeterminado';

export interface CesionEvidence {
  /** the SII's transfer record, null = the SII knows of none, undefined = never asked */
  cesionario: { rut: string; razon_social: string; fecha_cesion: string } | null | undefined;
  consultadoAl: Date | null;
  fchEmis: string | null;
}

export interface CesionBlock {
  estado: CesionEstado;
  cesionario?: { rut: string; razon_social: string; fecha_cesion: string };
  consultadoAl: string | null;
  motivo?: string;
}

export function cesionBlock(e: CesionEvidence, now: Date): CesionBlock {
  const consultadoAl = e.consultadoAl ? e.consultadoAl.toISOString() : null;
  if (!e.fchEmis) return { estado: 'indeterminado', consultadoAl, motivo: 'fecha_emision_desconocida' };
  if (e.cesionario === undefined || !e.consultadoAl)
    return { estado: 'indeterminado', consultadoAl, motivo: 'sin_consulta_sii' };
  if (now.getTime() - e.consultadoAl.getTime() > CESION_EVIDENCE_MAX_AGE_MS)
    return { estado: 'indeterminado', consultadoAl, motivo: 'consulta_vencida' };
  if (e.cesionario) return { estado: 'cedida', cesionario: e.cesionario, consultadoAl };
  return { estado: 'no_cedida', consultadoAl };
}
