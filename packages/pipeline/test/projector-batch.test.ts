/**
 * The projector applies a batch of dte-status records in one transaction with the outcome of
 * applying them one by one: the same feed, the same read model, the same results (duplicates
 * inside the batch and replays of the batch change nothing).
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import {
  insertCafRow,
  insertCertificateRow,
  insertQueuedDocument,
  insertTenant,
  type Tenant,
} from '../../../test/support/tenant-fixture';
import { applyStatusRecord, applyStatusRecords, type DteStatusRecord } from '../src';

describe('projector: a batch of dte-status records in one transaction', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  let o: Tenant;
  let cafId: string;
  let certificateId: string;
  let nextFolio = 1;
  before(async () => {
    db = await migratedDatabase('projector_batch');
    o = await insertTenant(db.dataSource);
    cafId = await insertCafRow(db.dataSource, o, 33, 1, 100);
    certificateId = await insertCertificateRow(db.dataSource, o);
  });
  after(async () => {
    await db?.cleanup();
  });

  /** a document as the emission leaves it: queued, its feed row, its queued record in the outbox */
  const issue = () =>
    insertQueuedDocument(db.dataSource, o, { tipoDte: 33, folio: nextFolio++, cafId, certificateId });
  const rec = (
    doc: { id: string; folio: number },
    sii_status: string,
    at: number,
    extra: Partial<DteStatusRecord> = {},
  ): DteStatusRecord => ({
    event_id: randomUUID(),
    dte_id: doc.id,
    organization_id: o.organizationId,
    sii_env: 'cert',
    tipo_dte: 33,
    folio: doc.folio,
    sii_status,
    sii_glosa: null,
    track_id: null,
    observed_at: new Date(at).toISOString(),
    imported: false,
    source: 'sii-poller',
    ...extra,
  });
  const state = async (id: string) => {
    const [row] = await db.dataSource.query(
      'SELECT sii_status, sii_glosa, observed_at, track_id FROM dtes WHERE id = $1',
      [id],
    );
    const feed: { sii_status: string }[] = await db.dataSource.query(
      'SELECT sii_status FROM dte_events WHERE dte_id = $1 ORDER BY observed_at, id',
      [id],
    );
    return { row, feed: feed.map((f) => f.sii_status) };
  };

  it("leaves the api's own queued record to the statement that wrote the document: no claim, no lock, the same feed; the next status applies", async () => {
    const d = await issue();
    // the record as the relay publishes it, from the outbox row the emission wrote
    const [row] = await db.dataSource.query(
      `SELECT payload FROM outbox WHERE message_key = $1 AND topic = 'dte-status'`,
      [d.id],
    );
    const queued = row.payload as DteStatusRecord;
    expect(queued).to.include({ source: 'api', sii_status: 'queued' });
    expect((await state(d.id)).feed).to.deep.equal(['queued']);
    const results = await applyStatusRecords(db.dataSource, [
      queued,
      rec(d, 'signed', Date.now() + 1000, { source: 'signer' }),
      queued,
    ]);
    expect(results).to.deep.equal(['not_applied', 'applied', 'not_applied']);
    const after = await state(d.id);
    expect(after.feed).to.deep.equal(['queued', 'signed']);
    expect(after.row.sii_status).to.equal('signed');
    const [claims] = await db.dataSource.query(
      'SELECT count(*)::int AS n FROM processed_events WHERE event_id = $1',
      [queued.event_id],
    );
    expect(claims.n).to.equal(0);
  });

  it('gives the feed, read model and results of one-by-one application, for several documents at once', async () => {
    const a = await issue();
    const b = await issue();
    const base = Date.now() + 1000;
    // a history per document: in order, a late older record, an echo under a new event id, the
    // same event twice, a record of a document nobody holds
    const script = (d: { id: string; folio: number }) => {
      const sending = rec(d, 'sending', base, { track_id: '4711', source: 'sii-uploader' });
      const epr = rec(d, 'EPR', base + 400);
      return [
        rec(d, 'signed', base - 100, { source: 'signer' }),
        sending,
        rec(d, '-11', base + 100),
        epr,
        rec(d, 'REC', base + 200), // late: older than EPR, fits in the chronology
        rec(d, 'SOK', base + 500), // echo after the verdict: not applied, not in the feed
        { ...epr }, // same event twice
      ];
    };
    const unknown = rec({ id: randomUUID(), folio: 1 }, 'EPR', base);
    const batchA = script(a);
    const oneByOneA: string[] = [];
    for (const r of batchA) oneByOneA.push(await applyStatusRecord(db.dataSource, r));
    const batchB = script(b);
    const batched = await applyStatusRecords(db.dataSource, [...batchB, unknown]);

    expect(batched.slice(0, -1)).to.deep.equal(oneByOneA);
    expect(batched.at(-1)).to.equal('unknown_document');
    const sa = await state(a.id);
    const sb = await state(b.id);
    expect(sb.feed).to.deep.equal(sa.feed);
    expect(sb.feed).to.deep.equal(['queued', 'signed', 'sending', '-11', 'REC', 'EPR']);
    expect(sb.row.sii_status).to.equal('EPR');
    expect(sb.row.track_id).to.equal('4711');
    expect(new Date(sb.row.observed_at).getTime()).to.equal(base + 400);

    // a replay of the whole batch changes nothing
    const again = await applyStatusRecords(db.dataSource, batchB);
    expect(new Set(again)).to.deep.equal(new Set(['duplicate']));
    expect((await state(b.id)).feed).to.deep.equal(sb.feed);
  });

  it('stores glosas and track ids with quotes, backslashes, braces, commas, NULL and line breaks exactly; a refused batch claims nothing', async () => {
    const d = await issue();
    const base = Date.now() + 1000;
    const glosa = `O'Brien \\ "rechazo" {a,b} NULL, ñandú\n$1 ''; DROP TABLE dtes; --`;
    const track = `7'7\\"{}`;
    // a NUL cannot be stored: the whole batch is refused, no claim is left behind
    const bad = rec(d, 'RCH', base + 50, { sii_glosa: 'a\u0000b' });
    let refused: unknown;
    try {
      await applyStatusRecords(db.dataSource, [rec(d, 'signed', base, { source: 'signer' }), bad]);
    } catch (err) {
      refused = err;
    }
    expect(refused).to.be.an('error');
    const [none] = await db.dataSource.query(
      'SELECT count(*)::int AS n FROM processed_events WHERE event_id = $1',
      [bad.event_id],
    );
    expect(none.n).to.equal(0);
    expect((await state(d.id)).feed).to.deep.equal(['queued']);

    const results = await applyStatusRecords(db.dataSource, [
      rec(d, 'sending', base, { track_id: track, source: 'sii-uploader' }),
      rec(d, 'RCH', base + 100, { sii_glosa: glosa }),
    ]);
    expect(results).to.deep.equal(['applied', 'applied']);
    const s = await state(d.id);
    expect(s.feed).to.deep.equal(['queued', 'sending', 'RCH']);
    expect(s.row).to.include({ sii_status: 'RCH', sii_glosa: glosa, track_id: track });
    const [event] = await db.dataSource.query(
      `SELECT glosa, track_id FROM dte_events WHERE dte_id = $1 AND sii_status = 'RCH'`,
      [d.id],
    );
    expect(event).to.deep.equal({ glosa, track_id: null });
    const [sending] = await db.dataSource.query(
      `SELECT track_id FROM dte_events WHERE dte_id = $1 AND sii_status = 'sending'`,
      [d.id],
    );
    expect(sending.track_id).to.equal(track);
  });
});
