import type { DataSource } from 'typeorm';
import { ApiError } from '@dte/error-catalog';
import { findDte, type DteRow, type DteScope } from './dte-row';

export async function getDteOr404(db: DataSource, scope: DteScope, id: string): Promise<DteRow> {
  const row = await findDte(db, scope, id);
  if (!row) throw new ApiError('not_found', 'No such document.');
  return row;
}

/** GET /dtes/:id/events: the feed, oldest first (observed_at, then arrival). */
export async function dteEvents(db: DataSource, scope: DteScope, id: string) {
  await getDteOr404(db, scope, id);
  const rows: {
    event_id: string;
    sii_status: string;
    glosa: string | null;
    track_id: string | null;
    source: string;
    observed_at: Date;
  }[] = await db.query(
    `SELECT event_id, sii_status, glosa, track_id, source, observed_at FROM dte_events
      WHERE dte_id = $1 ORDER BY observed_at, id`,
    [id],
  );
  return {
    data: rows.map((r) => ({
      event_id: r.event_id,
      sii_status: r.sii_status,
      glosa: r.glosa,
      track_id: r.track_id === null ? null : Number(r.track_id),
      source: r.source,
      observed_at: new Date(r.observed_at).toISOString(),
    })),
  };
}

/** GET /dtes/:id/xml: the signed document as stored (ISO-8859-1 bytes), or not yet available. */
export async function signedXml(db: DataSource, scope: DteScope, id: string): Promise<Buffer> {
  await getDteOr404(db, scope, id);
  const rows: { signed_xml: string | null }[] = await db.query('SELECT signed_xml FROM dtes WHERE id = $1', [
    id,
  ]);
  const xml = rows[0]?.signed_xml;
  if (!xml)
    throw new ApiError('dte.xml.not_yet_available', 'The document is not signed yet; poll it and retry.');
  return Buffer.from(xml, encodingOf(xml));
}

/** The bytes of the XML in the encoding its declaration names (the SII's documents are Latin-1). */
function encodingOf(xml: string): BufferEncoding {
  const m = /^<\?xml[^>]*encoding=["']([^"']+)["']/i.exec(xml);
  return m && /^(iso-8859-1|latin1)$/i.test(m[1]) ? 'latin1' : 'utf8';
}
