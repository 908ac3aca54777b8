/**
 * The purchases inbox (`recepcion_documentos`): listing with the spec's filters and paging, the
 * row as the api shows it (legal deadline and cesión computed at read time), received intercambio
 * documents stored whole or not at all, and the outcome of an acuse or claim the SII recorded.
 */
import { cesionBlock, type CesionBlock } from './cesion';
import { plazoLegal, type PlazoLegal } from './deadline';
import { CESION_EVIDENCE_MAX_AGE_MS } from './cesion';
import { isClaim, siiEstado, type RegisterAction } from './estados';
import type { ReceivedDocument } from './intercambio';
import type { SyncDb } from './rcv-sync';

export interface InboxScope {
  organizationId: string;
  env: 'cert' | 'prod';
  /** the api key's company; null = every company of the organization */
  companyId: string | null;
}

export interface InboxEvent {
  accion: RegisterAction;
  codResp: number;
  descResp: string;
  registrado_at: string;
}

export interface InboxDocument {
  id: string;
  rut_emisor: string;
  razon_social_emisor: string | null;
  rut_receptor: string;
  tipo_dte: number;
  folio: number;
  fecha_emision: string | null;
  monto_neto: number;
  monto_exento: number;
  iva: number;
  monto_total: number;
  origen: string[];
  sii_estado: string | null;
  sii_eventos: string[];
  acuse: RegisterAction | null;
  reclamo: RegisterAction | null;
  eventos: InboxEvent[];
  plazo: PlazoLegal;
  cesion: CesionBlock;
  tiene_xml: boolean;
  created_at: string;
}

const COLUMNS = `r.id, r.company_id, c.rut AS rut_receptor, r.rut_emisor, r.razon_social_emisor, r.tipo_dte, r.folio,
  to_char(r.fch_emis, 'YYYY-MM-DD') AS fch_emis, r.mnt_neto, r.mnt_exe, r.iva, r.mnt_total, r.fecha_recepcion_sii,
  r.origen, r.sii_estado, r.sii_eventos, r.eventos, r.cesion_estado, r.cesion_cesionario, r.cesion_consultado_al,
  (r.xml IS NOT NULL) AS tiene_xml, r.created_at`;

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export function showInboxRow(r: Row, now: Date): InboxDocument {
  const eventos = (r.eventos ?? []) as InboxEvent[];
  const siiEventos = (r.sii_eventos ?? []) as string[];
  const all = [...siiEventos, ...eventos.map((e) => e.accion)];
  const last = (f: (a: string) => boolean) => (all.filter(f).pop() as RegisterAction | undefined) ?? null;
  return {
    id: r.id,
    rut_emisor: r.rut_emisor,
    razon_social_emisor: r.razon_social_emisor ?? null,
    rut_receptor: r.rut_receptor,
    tipo_dte: Number(r.tipo_dte),
    folio: Number(r.folio),
    fecha_emision: r.fch_emis ?? null,
    monto_neto: Number(r.mnt_neto),
    monto_exento: Number(r.mnt_exe),
    iva: Number(r.iva),
    monto_total: Number(r.mnt_total),
    origen: r.origen,
    sii_estado: r.sii_estado ?? null,
    sii_eventos: siiEventos,
    acuse: last((a) => a === 'ACD' || a === 'ERM'),
    reclamo: last(isClaim),
    eventos,
    plazo: plazoLegal(r.fecha_recepcion_sii ? new Date(r.fecha_recepcion_sii) : null, now),
    cesion: cesionBlock(
      {
        cesionario:
          r.cesion_consultado_al === null
            ? undefined
            : r.cesion_estado === 'cedida'
              ? (r.cesion_cesionario ?? null)
              : null,
        consultadoAl: r.cesion_consultado_al ? new Date(r.cesion_consultado_al) : null,
        fchEmis: r.fch_emis ?? null,
      },
      now,
    ),
    tiene_xml: r.tiene_xml === true,
    created_at: new Date(r.created_at).toISOString(),
  };
}

function scopeWhere(s: InboxScope, params: unknown[]): string {
  params.push(s.organizationId, s.env);
  let w = `r.organization_id = $${params.length - 1} AND r.sii_env = $${params.length}`;
  if (s.companyId) {
    params.push(s.companyId);
    w += ` AND r.company_id = $${params.length}`;
  }
  return w;
}

/** `{documentos, total}`: total counts the filtered universe before paging. */
export async function listInbox(
  db: SyncDb,
  s: InboxScope,
  q: { cedida: boolean; page: number; pageSize: number },
  now: Date,
): Promise<{ documentos: InboxDocument[]; total: number }> {
  const params: unknown[] = [];
  let where = scopeWhere(s, params);
  if (q.cedida) {
    // the same rule as the block shows: only current evidence of a transfer counts
    params.push(new Date(now.getTime() - CESION_EVIDENCE_MAX_AGE_MS));
    where += ` AND r.cesion_estado = 'cedida' AND r.fch_emis IS NOT NULL AND r.cesion_consultado_al >= $${params.length}`;
  }
  const [{ total }] = await db.query(
    `SELECT count(*)::int AS total FROM recepcion_documentos r WHERE ${where}`,
    params,
  );
  params.push(q.pageSize, (q.page - 1) * q.pageSize);
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM recepcion_documentos r JOIN companies c ON c.id = r.company_id
      WHERE ${where} ORDER BY r.fecha_recepcion_sii DESC NULLS LAST, r.created_at DESC, r.id
      LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return { documentos: rows.map((r: Row) => showInboxRow(r, now)), total };
}

export async function getInboxRow(db: SyncDb, s: InboxScope, id: string): Promise<Row | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const params: unknown[] = [];
  const where = scopeWhere(s, params);
  params.push(id);
  const rows = await db.query(
    `SELECT ${COLUMNS} FROM recepcion_documentos r JOIN companies c ON c.id = r.company_id
      WHERE ${where} AND r.id = $${params.length}`,
    params,
  );
  return rows[0];
}

export async function inboxXml(db: SyncDb, s: InboxScope, id: string): Promise<Buffer | undefined> {
  const row = await getInboxRow(db, s, id);
  if (!row) return undefined;
  const [x] = await db.query(`SELECT xml FROM recepcion_documentos WHERE id = $1`, [id]);
  return x?.xml ?? undefined;
}

/**
 * Stores the DTEs of one verified intercambio file in one transaction (a document already in
 * the inbox, e.g. from the RCV, gets the XML and `intercambio` in its origin). Returns their ids.
 */
export async function storeReceived(
  db: SyncDb,
  s: { organizationId: string; companyId: string; env: 'cert' | 'prod' },
  docs: ReceivedDocument[],
): Promise<string[]> {
  const qr = db.createQueryRunner();
  await qr.connect();
  try {
    await qr.startTransaction();
    const ids: string[] = [];
    try {
      for (const d of docs) {
        const [row] = await qr.query(
          `INSERT INTO recepcion_documentos AS r (organization_id, company_id, sii_env, rut_emisor, razon_social_emisor,
              tipo_dte, folio, fch_emis, mnt_neto, mnt_exe, iva, mnt_total, origen, xml)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, '{intercambio}', $13)
           ON CONFLICT (company_id, sii_env, rut_emisor, tipo_dte, folio) DO UPDATE SET
             xml = COALESCE(r.xml, EXCLUDED.xml),
             razon_social_emisor = COALESCE(r.razon_social_emisor, EXCLUDED.razon_social_emisor),
             fch_emis = COALESCE(r.fch_emis, EXCLUDED.fch_emis),
             origen = CASE WHEN 'intercambio' = ANY(r.origen) THEN r.origen ELSE r.origen || '{intercambio}' END,
             updated_at = now()
           RETURNING id`,
          [
            s.organizationId,
            s.companyId,
            s.env,
            d.rutEmisor,
            d.razonSocialEmisor,
            d.tipoDte,
            d.folio,
            d.fchEmis || null,
            d.mntNeto,
            d.mntExe,
            d.iva,
            d.mntTotal,
            d.xml,
          ],
        );
        ids.push(row.id);
      }
      await qr.commitTransaction();
    } catch (err) {
      await qr.rollbackTransaction();
      throw err;
    }
    return ids;
  } finally {
    await qr.release();
  }
}

/**
 * The SII recorded `accion` on a purchase: the inbox row, the purchases row of the register and,
 * when the issuer is one of the same organization's companies, its own document's receptor_estado
 * (the inbox row's organization) — in one transaction.
 */
export async function recordInboxEvent(
  db: SyncDb,
  row: Row,
  env: 'cert' | 'prod',
  ev: InboxEvent,
): Promise<void> {
  const qr = db.createQueryRunner();
  await qr.connect();
  try {
    await qr.startTransaction();
    try {
      const [cur] = await qr.query(`SELECT sii_eventos FROM recepcion_documentos WHERE id = $1 FOR UPDATE`, [
        row.id,
      ]);
      const codes: string[] = cur.sii_eventos.includes(ev.accion)
        ? cur.sii_eventos
        : [...cur.sii_eventos, ev.accion];
      const estado = siiEstado('', codes);
      await qr.query(
        `UPDATE recepcion_documentos SET eventos = eventos || $2::jsonb, sii_eventos = $3, sii_estado = $4, updated_at = now()
          WHERE id = $1`,
        [row.id, JSON.stringify([ev]), codes, estado],
      );
      await qr.query(
        `UPDATE rcv_documents SET eventos = $6, sii_estado = $7, updated_at = now()
          WHERE company_id = $1 AND sii_env = $2 AND operacion = 'compras' AND rut_emisor = $3 AND tipo_dte = $4 AND folio = $5`,
        [row.company_id, env, row.rut_emisor, row.tipo_dte, row.folio, codes, estado],
      );
      // the issuer is one of this organization's companies: its document shows what its receiver
      // did. Only in the same organization: another tenant's documents learn it from their own
      // RCV sync (what the SII shows them), never from a write by this tenant.
      await qr.query(
        `UPDATE dtes SET receptor_estado = $6
          WHERE organization_id = (SELECT organization_id FROM recepcion_documentos WHERE id = $7) AND sii_env = $1 AND upper(replace(rut_emisor, '.', '')) = $2
            AND tipo_dte = $3 AND folio = $4 AND upper(replace(rut_receptor, '.', '')) = $5`,
        [
          env,
          row.rut_emisor,
          row.tipo_dte,
          row.folio,
          row.rut_receptor,
          codes.some(isClaim) ? 'reclamado' : 'aceptado',
          row.id,
        ],
      );
      await qr.commitTransaction();
    } catch (err) {
      await qr.rollbackTransaction();
      throw err;
    }
  } finally {
    await qr.release();
  }
}

/** The SII's reception instant of an inbox document, when it was unknown (never overwrites one the RCV gave). */
export async function setReceptionDate(db: SyncDb, id: string, at: Date): Promise<void> {
  await db.query(
    `UPDATE recepcion_documentos SET fecha_recepcion_sii = $2, updated_at = now() WHERE id = $1 AND fecha_recepcion_sii IS NULL`,
    [id, at],
  );
}
