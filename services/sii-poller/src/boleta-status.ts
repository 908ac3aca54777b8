/**
 * Uploads of the boleta channel (sii_uploads.channel = 'boleta') are polled through the SII's
 * boleta REST status, `boleta.electronica.envio/{rut}-{dv}-{trackid}`, instead of QueryEstUp:
 * the poller's one dispatch by channel. The answer already names each boleta that was not
 * accepted clean (detalle_rep_rech: RCH rejected, RPR/RLV accepted with objections), so no
 * per-document query is needed after EPR.
 */
import type { SigningCredential } from '@dte/engine';
import { boletaRestClientFor, type DocumentStatus, type SiiClient, type SiiSession } from '@dte/sii-client';
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
    for (const d of docs) {
      const det = detalle.get(`${d.tipo_dte}|${Number(d.folio)}`);
      perDoc.set(
        d.id,
        det
          ? { estado: boletaVerdict(det.estado), glosa: det.descripcion.join('; ') }
          : { estado: 'EPR', glosa: 'Boleta aceptada' },
      );
    }
    return { next: 'done', publish: { estado: 'EPR', glosa: null, perDoc } };
  }
  return {
    next: 'again',
    countsAsAttempt: true,
    ...(st.estado !== p.last_estado ? { publish: { estado: st.estado, glosa: null } } : {}),
  };
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
