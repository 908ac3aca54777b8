/**
 * Uploads of the boleta channel (sii_uploads.channel = 'boleta') are polled through the SII's
 * boleta REST status, `boleta.electronica.envio/{rut}-{dv}-{trackid}`, instead of QueryEstUp:
 * the poller's one dispatch by channel. The answer already names each boleta that was not
 * accepted clean (detalle_rep_rech: RCH rejected, RPR/RLV accepted with objections), so no
 * per-document query is needed after EPR.
 */
import type { SigningCredential } from '@dte/engine';
import {
  boletaRestClientFor,
  type BoletaSiiError,
  type DocumentStatus,
  type SiiClient,
  type SiiSession,
} from '@dte/sii-client';
import type { DataSource } from 'typeorm';
import { loadDocs, type DocQuery } from './documents';
import { ENVELOPE_REJECTIONS } from './verdicts';

export interface BoletaPollRow {
  upload_id: string;
  rut_emisor: string;
  sii_env: 'cert' | 'prod';
  track_id: string;
  dte_ids: string[];
  last_estado: string | null;
}

export type BoletaPollResult =
  | {
      next: 'again';
      countsAsAttempt: boolean;
      publish?: { estado: string; glosa?: string | null };
    }
  | {
      next: 'done';
      publish: {
        estado: string;
        glosa?: string | null;
        perDoc?: Map<string, { estado: string; glosa?: string }>;
      };
    };

export async function uploadChannel(db: DataSource, uploadId: string): Promise<'dte' | 'boleta'> {
  const rows: { channel: 'dte' | 'boleta' }[] = await db.query(
    'SELECT channel FROM sii_uploads WHERE id = $1',
    [uploadId],
  );
  return rows[0]?.channel ?? 'dte';
}

/** Per-boleta codes of the REST status → our sii_status (RLV is a minor objection: RPR). */
function boletaVerdict(code: string): string {
  if (code === 'RCH') return 'RCH';
  if (code === 'RPR' || code === 'RLV') return 'RPR';
  if (code === 'DOK') return 'EPR';
  return code;
}

export async function pollBoletaUpload(
  db: DataSource,
  sii: SiiClient,
  credential: SigningCredential,
  p: BoletaPollRow,
): Promise<BoletaPollResult> {
  const st = await boletaRestClientFor(sii).estado({
    env: p.sii_env,
    credential,
    rutCompany: p.rut_emisor,
    trackId: p.track_id,
  });
  if (ENVELOPE_REJECTIONS.includes(st.estado))
    return { next: 'done', publish: { estado: st.estado, glosa: st.errores.join('; ') || null } };
  if (st.estado === 'EPR') {
    const docs = await loadDocs(db, p.dte_ids);
    const detalle = new Map(st.detalle.map((d) => [`${d.tipo}|${d.folio}`, d]));
    const perDoc = new Map<string, { estado: string; glosa?: string }>();
    const findings: { dteId: string; estado: string; errores: BoletaSiiError[] }[] = [];
    for (const d of docs) {
      const det = detalle.get(`${d.tipo_dte}|${Number(d.folio)}`);
      if (!det) {
        perDoc.set(d.id, { estado: 'EPR', glosa: 'Boleta aceptada' });
        continue;
      }
      const estado = boletaVerdict(det.estado);
      perDoc.set(d.id, { estado, glosa: boletaGlosa(det.descripcion, det.errores) });
      findings.push({ dteId: d.id, estado, errores: det.errores });
    }
    await keepBoletaErrors(db, p.track_id, findings);
    return { next: 'done', publish: { estado: 'EPR', glosa: null, perDoc } };
  }
  return {
    next: 'again',
    countsAsAttempt: true,
    ...(st.estado !== p.last_estado ? { publish: { estado: st.estado, glosa: null } } : {}),
  };
}

/**
 * The glosa of a boleta not accepted clean: the SII's description and each finding as the SII
 * writes it in its e-mails, `(DET L[1] -2-200) Valor Detalle Distinto a Precio * Cantidad: [..]`.
 */
export function boletaGlosa(descripcion: string[], errores: BoletaSiiError[]): string {
  const head = descripcion.join('; ');
  const parts = errores.map(
    (e) =>
      `(${e.seccion} L[${e.linea ?? 0}] -${e.nivel ?? ''}-${e.codigo ?? ''}) ${e.descripcion}${e.detalle ? `: ${e.detalle}` : ''}`,
  );
  return [head, parts.join('; ')].filter(Boolean).join(': ');
}

/**
 * The SII's findings per boleta (`error[]`), kept as read (boleta_sii_errors) so GET /boletas/:id
 * shows them; written before the verdict is published, again on a repeated poll (idempotent).
 */
async function keepBoletaErrors(
  db: DataSource,
  trackId: string,
  findings: { dteId: string; estado: string; errores: BoletaSiiError[] }[],
): Promise<void> {
  if (findings.length === 0) return;
  const sorted = [...findings].sort((a, b) => (a.dteId < b.dteId ? -1 : 1));
  await db.query(
    `INSERT INTO boleta_sii_errors (dte_id, track_id, estado, errors)
     SELECT f.dte_id, $1, f.estado, f.errors
       FROM jsonb_to_recordset($2::jsonb) AS f(dte_id uuid, estado text, errors jsonb)
     ON CONFLICT (dte_id) DO UPDATE
        SET track_id = EXCLUDED.track_id, estado = EXCLUDED.estado, errors = EXCLUDED.errors, observed_at = now()`,
    [trackId, JSON.stringify(sorted.map((f) => ({ dte_id: f.dteId, estado: f.estado, errors: f.errores })))],
  );
}

export const BOLETA_TIPOS: readonly number[] = [39, 41];

/**
 * Reconciliation of one boleta (its send's track id unknown: repeated or unconfirmed upload):
 * the boleta REST per-document status, read like QueryEstDte (readDocCheck).
 */
export function boletaDocumentStatus(session: SiiSession, q: DocQuery): Promise<DocumentStatus> {
  return boletaRestClientFor(session.client).documentStatus({
    env: q.env,
    credential: session.credential,
    rutCompany: q.rutCompany,
    rutReceptor: q.rutReceptor,
    tipoDte: q.tipoDte,
    folio: q.folio,
    fechaEmision: q.fechaEmision,
    montoTotal: q.montoTotal,
  });
}
