/**
 * The signer handles a batch of commands in one transaction with the outcome of handling them one
 * by one: each document signed once, a command seen twice (in the batch or in a later batch) signs
 * nothing, a command of a document this database does not hold is skipped, and the outbox gets
 * exactly one dte.signed and one `signed` status per signed document.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { statusAppliedFrom } from '@dte/database';
import { StoredCredentials } from '@dte/secrets';
import { OpenedCafs } from '../src/opened-cafs';
import { signCommands, type EmitDteCommand } from '../src/signer';
import { applyStatusRecords } from '@dte/pipeline';
import type { DteStatusRecord } from '@dte/pipeline';
import { startTestApi, type TestApi } from '../../api/test/support/test-api';
import { body, emit, orgWithCafs, type DteOrg } from '../../api/test/dtes-fixtures';

const logger = pino({ level: 'silent' });

describe('signer: a batch of commands in one transaction', function () {
  this.timeout(60_000);
  let t: TestApi;
  let o: DteOrg;
  before(async () => {
    t = await startTestApi();
    o = await orgWithCafs(t, { tipos: [33, 34] });
  });
  after(async () => {
    await t?.close();
  });

  const db = () => t.db.dataSource;
  const issue = async (tipo: number) => {
    const res = await emit(t, o, body(tipo, o.rut));
    expect(res.status, res.text).to.equal(202);
    const id = (res.body as { id: string }).id;
    const [cmd]: { payload: EmitDteCommand }[] = await db().query(
      `SELECT payload FROM outbox WHERE topic = 'dte.commands' AND message_key = $1`,
      [id],
    );
    return cmd!.payload;
  };
  const outboxOf = async (ids: string[]) =>
    (
      (await db().query(
        `SELECT topic, payload->>'dte_id' AS dte_id, payload->>'sii_status' AS sii_status FROM outbox
          WHERE payload->>'dte_id' = ANY($1::text[]) AND topic <> 'dte.commands' ORDER BY id`,
        [ids],
      )) as { topic: string; dte_id: string; sii_status: string | null }[]
    ).filter((r) => r.sii_status !== 'queued');

  it('signs each document once, skips duplicates and unknown documents, one outbox pair per document', async () => {
    const a = await issue(33);
    const b = await issue(34);
    const unknown: EmitDteCommand = { ...a, event_id: randomUUID(), dte_id: randomUUID() };
    const deps = { dataSource: db(), keys: t.deps.keys, logger };

    const results = await signCommands(deps, [a, b, { ...a }, unknown]);
    expect(results).to.deep.equal(['signed', 'signed', 'duplicate', 'unknown_document']);

    const rows: { id: string; signed_xml: string | null; tipo_dte: number }[] = await db().query(
      'SELECT id, signed_xml, tipo_dte FROM dtes WHERE id = ANY($1::uuid[]) ORDER BY tipo_dte',
      [[a.dte_id, b.dte_id]],
    );
    expect(rows.map((r) => r.tipo_dte)).to.deep.equal([33, 34]);
    for (const r of rows) expect(r.signed_xml).to.contain('<TED');
    const out = await outboxOf([a.dte_id, b.dte_id]);
    for (const id of [a.dte_id, b.dte_id]) {
      expect(
        out.filter((r) => r.dte_id === id).map((r) => `${r.topic}:${r.sii_status ?? ''}`),
      ).to.have.members(['dte.signed:', 'dte-status:signed']);
    }

    // a later batch: the same commands are duplicates, a new command for a signed document is
    // refused; nothing changes
    const again = await signCommands(deps, [b, { ...a, event_id: randomUUID() }]);
    expect(again).to.deep.equal(['duplicate', 'already_signed']);
    const after: { signed_xml: string }[] = await db().query(
      'SELECT signed_xml FROM dtes WHERE id = ANY($1::uuid[]) ORDER BY tipo_dte',
      [[a.dte_id, b.dte_id]],
    );
    expect(after.map((r) => r.signed_xml)).to.deep.equal(rows.map((r) => r.signed_xml));
    expect(await outboxOf([a.dte_id, b.dte_id])).to.have.length(out.length);
  });

  it('two signers handling the same batch at once: each document signed once, one outbox pair each', async () => {
    const a = await issue(33);
    const b = await issue(34);
    const deps = { dataSource: db(), keys: t.deps.keys, logger };
    // the same commands, and a second command (another event id) for a: delivered twice at once
    const [one, two] = await Promise.all([
      signCommands(deps, [a, b]),
      signCommands(deps, [{ ...b }, { ...a, event_id: randomUUID() }, { ...a }]),
    ]);
    const all = [...one, ...two];
    expect(all.filter((r) => r === 'signed')).to.have.length(2);
    expect(all.filter((r) => r !== 'signed')).to.have.members(['duplicate', 'already_signed', 'duplicate']);
    const out = await outboxOf([a.dte_id, b.dte_id]);
    for (const id of [a.dte_id, b.dte_id]) {
      expect(
        out.filter((r) => r.dte_id === id).map((r) => `${r.topic}:${r.sii_status ?? ''}`),
      ).to.have.members(['dte.signed:', 'dte-status:signed']);
    }
    const claims: { n: number }[] = await db().query(
      `SELECT count(*)::int AS n FROM processed_events WHERE consumer = 'signer' AND event_id = ANY($1::text[])`,
      [[a.event_id, b.event_id]],
    );
    expect(claims[0]!.n).to.equal(2);
  });

  it('writes the `signed` status and its feed event itself; the projector skips the record, or applies it when the signer did not', async () => {
    const deps = { dataSource: db(), keys: t.deps.keys, logger };
    const a = await issue(33);
    const b = await issue(33);
    // b's queued observation lies after the signing instant (a clock ahead of the signer's): a
    // `signed` record does not always replace it, so the signer leaves it to the projector
    await db().query(`UPDATE dtes SET observed_at = now() + interval '1 hour' WHERE id = $1`, [b.dte_id]);
    expect(await signCommands(deps, [a, b], [{ 'x-request-id': 'req-a' }, undefined])).to.deep.equal([
      'signed',
      'signed',
    ]);

    const state = async (id: string) => {
      const [row]: { sii_status: string; observed_at: Date; signed_at: Date }[] = await db().query(
        'SELECT sii_status, observed_at, signed_at FROM dtes WHERE id = $1',
        [id],
      );
      const feed: { event_id: string; sii_status: string; source: string }[] = await db().query(
        'SELECT event_id, sii_status, source FROM dte_events WHERE dte_id = $1 ORDER BY id',
        [id],
      );
      return { ...row!, feed };
    };
    const recordOf = async (id: string) => {
      const [r]: { payload: DteStatusRecord; headers: Record<string, string> | null }[] = await db().query(
        `SELECT payload, headers FROM outbox
          WHERE topic = 'dte-status' AND message_key = $1 AND payload->>'sii_status' = 'signed'`,
        [id],
      );
      return r!;
    };

    // a: signed, in the read model and the feed, by the signer's statement
    const sa = await state(a.dte_id);
    expect(sa.sii_status).to.equal('signed');
    expect(sa.observed_at.getTime()).to.equal(sa.signed_at.getTime());
    const ra = await recordOf(a.dte_id);
    expect(sa.feed.map((e) => `${e.sii_status}:${e.source}`)).to.deep.equal(['queued:api', 'signed:signer']);
    expect(sa.feed[1]!.event_id).to.equal(ra.payload.event_id);
    const from = statusAppliedFrom(ra.headers ?? undefined);
    expect(from?.sii_status).to.equal('queued');
    expect(ra.headers?.['x-request-id'], 'the correlation headers stay').to.equal('req-a');
    // the projector has nothing to do for it, and nothing changes
    expect(await applyStatusRecords(db(), [ra.payload], [ra.headers ?? undefined])).to.deep.equal([
      'not_applied',
    ]);
    expect(await state(a.dte_id)).to.deep.equal(sa);
    // a record of an older signer (no header): the projector finds it applied already
    expect(await applyStatusRecords(db(), [ra.payload])).to.deep.equal(['not_applied']);
    expect(await state(a.dte_id)).to.deep.equal(sa);

    // b: still queued, no feed event, no header; the projector applies the record as before (a
    // late observation: in the feed, not in the status)
    const sb = await state(b.dte_id);
    expect(sb.sii_status).to.equal('queued');
    expect(sb.feed.map((e) => e.sii_status)).to.deep.equal(['queued']);
    const rb = await recordOf(b.dte_id);
    expect(statusAppliedFrom(rb.headers ?? undefined)).to.equal(null);
    expect(await applyStatusRecords(db(), [rb.payload], [rb.headers ?? undefined])).to.deep.equal([
      'not_applied',
    ]);
    const after = await state(b.dte_id);
    expect(after.sii_status).to.equal('queued');
    expect(after.feed.map((e) => `${e.sii_status}:${e.source}`)).to.deep.equal([
      'queued:api',
      'signed:signer',
    ]);
    expect(after.feed[1]!.event_id).to.equal(rb.payload.event_id);
  });

  it('a certificate deleted after it was opened is not used: the next batch ends its document emision_fallida', async () => {
    const credentials = new StoredCredentials({ db: db(), keys: t.deps.keys, now: () => Date.now() });
    const deps = { dataSource: db(), keys: t.deps.keys, logger, credentials, cafs: new OpenedCafs() };
    const a = await issue(33);
    const b = await issue(33);
    expect(await signCommands(deps, [a])).to.deep.equal(['signed']);
    const [{ certificate_id }]: { certificate_id: string }[] = await db().query(
      'SELECT certificate_id FROM dtes WHERE id = $1',
      [b.dte_id],
    );
    await db().query('UPDATE certificates SET deleted_at = now() WHERE id = $1', [certificate_id]);
    expect(await signCommands(deps, [b])).to.deep.equal(['failed']);
    const [row]: { signed_xml: string | null }[] = await db().query(
      'SELECT signed_xml FROM dtes WHERE id = $1',
      [b.dte_id],
    );
    expect(row!.signed_xml).to.equal(null);
    const [status]: { glosa: string }[] = await db().query(
      `SELECT payload->>'sii_glosa' AS glosa FROM outbox
        WHERE topic = 'dte-status' AND message_key = $1 AND payload->>'sii_status' = 'emision_fallida'`,
      [b.dte_id],
    );
    expect(status!.glosa).to.match(/was deleted/);
    await db().query('UPDATE certificates SET deleted_at = NULL WHERE id = $1', [certificate_id]);
  });
});
