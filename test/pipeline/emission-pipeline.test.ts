import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { classify } from '@dte/status';
import { signCommand, type EmitDteCommand } from '@dte/signer';
import { body, emit } from '../../services/api/test/dtes-fixtures';
import { call } from '../../services/api/test/support/test-api';
import {
  eventually,
  pollerSettings,
  simAdmin,
  startPipeline,
  uploaderSettings,
  type Pipeline,
} from './harness';

interface Row {
  id: string;
  sii_status: string;
  sii_glosa: string | null;
  track_id: string | null;
  upload_id: string | null;
  folio: string;
  signed_xml: string | null;
}

interface SimUpload {
  trackId: string;
  verdict: string;
  documents: { tipoDte: number; folio: number; result: string }[];
}

describe('emission pipeline end to end (api, relay, projector, signer, sii-uploader, sii-poller, SII simulator)', function () {
  this.timeout(240_000);
  let p: Pipeline;

  before(async () => {
    // The SII simulator's timeline runs on its clock from the upload: -11 for registerMs, then the
    // intermediate codes (REC, SOK, FOK, CRT, PDR, PRD) one stepMs each, then the verdict. The
    // poller's first query comes firstDelayMs (200) after it hears of the track id, through the
    // outbox relay and Kafka: ~350 ms after the upload on a quiet machine, measured, but well over
    // a second on the shared 2-core machine under load. With the default 80 ms steps the whole
    // window was 780 ms, so the first poll sometimes saw EPR directly and "an intermediate code
    // in the feed" failed: a timing assumption of the test, not a race in the code (the real SII
    // can also reach its verdict between two polls; the poller publishes what it sees, and the
    // feed then rightly shows no intermediate code). 400 ms steps give a 2.7 s window.
    p = await startPipeline({ sim: { registerMs: 300, stepMs: 400 } });
  });
  after(async () => p?.close());

  const db = () => p.t.db.dataSource;
  const row = async (id: string): Promise<Row> =>
    (
      await db().query(
        'SELECT id, sii_status, sii_glosa, track_id, upload_id, folio, signed_xml FROM dtes WHERE id = $1',
        [id],
      )
    )[0];
  const feed = async (id: string): Promise<string[]> =>
    (
      await db().query('SELECT sii_status FROM dte_events WHERE dte_id = $1 ORDER BY observed_at, id', [id])
    ).map((r: { sii_status: string }) => r.sii_status);
  const issue = async (tipo = 33): Promise<string> => {
    const res = await emit(p.t, p.o, body(tipo, p.o.rut));
    expect(res.status, res.text).to.equal(202);
    return res.body.id as string;
  };
  const until = (id: string, statuses: string[], timeoutMs?: number) =>
    eventually(
      `${id} in ${statuses.join('/')}`,
      async () => {
        const r = await row(id);
        return statuses.includes(r.sii_status) ? r : undefined;
      },
      timeoutMs,
    );
  const simUploads = () => simAdmin<SimUpload[]>(p.t, 'GET', '/admin/cert/uploads');

  it('issues documents through POST /dtes that reach EPR, each uploaded once, with every status in the feed once', async () => {
    const ids = [await issue(33), await issue(33), await issue(34)];
    const rows = await Promise.all(ids.map((id) => until(id, ['EPR'])));
    for (const r of rows) {
      expect(r.track_id).to.match(/^\d+$/);
      expect(r.signed_xml).to.contain('<TED');
      expect(classify(r.sii_status)).to.include({ terminal: true, categoria: 'aceptado' });
    }
    // the feed: signed, sending (with the track id), the SII's intermediate codes, the verdict;
    // no status twice, in order
    for (const id of ids) {
      const f = await feed(id);
      expect(f.slice(0, 3)).to.deep.equal(['queued', 'signed', 'sending']);
      expect(f.at(-1)).to.equal('EPR');
      expect(new Set(f).size, f.join(',')).to.equal(f.length);
      expect(
        f.some((s) => ['-11', 'REC', 'SOK', 'FOK', 'CRT', 'PDR', 'PRD'].includes(s)),
        f.join(','),
      ).to.equal(true);
    }
    // the signer, the uploader and the poller applied their statuses in the statements that did
    // their work (header x-status-applied-from, which the projector skips), each replacing the
    // status before it
    const applied: { source: string; sii_status: string; from: string | null }[] = await db().query(
      `SELECT payload->>'source' AS source, payload->>'sii_status' AS sii_status,
                headers->>'x-status-applied-from' AS from
           FROM outbox WHERE topic = 'dte-status' AND message_key = ANY($1::text[]) AND payload->>'source' <> 'api'`,
      [ids],
    );
    for (const [source, status, from] of [
      ['signer', 'signed', 'queued'],
      ['sii-uploader', 'sending', 'signed'],
      ['sii-poller', 'EPR', null],
    ] as const) {
      const mine = applied.filter((r) => r.source === source && r.sii_status === status);
      expect(mine, `${source} ${status}`).to.have.length(ids.length);
      for (const r of mine) {
        expect(r.from, `${source} ${status} applied by its writer`).to.be.a('string');
        if (from) expect(r.from!.split(' ')[0]).to.equal(from);
      }
    }
    // the SII received each folio in exactly one upload, the one whose track id the document holds
    const uploads = await simUploads();
    for (const r of rows) {
      const holding = uploads.filter((u) =>
        u.documents.some((d) => d.folio === Number(r.folio) && [33, 34].includes(d.tipoDte)),
      );
      const mine = holding.filter((u) => u.documents.some((d) => d.folio === Number(r.folio)));
      expect(mine.map((u) => u.trackId)).to.include(r.track_id);
    }
    const folios = uploads.flatMap((u) => u.documents.map((d) => `${d.tipoDte}:${d.folio}`));
    expect(new Set(folios).size).to.equal(folios.length);
    // our record of the envelopes matches: accepted, one attempt, documents bound once
    const ups: { state: string; attempts: number; dte_ids: string[]; track_id: string }[] = await db().query(
      `SELECT state, attempts, dte_ids::text[] AS dte_ids, track_id FROM sii_uploads WHERE $1::uuid = ANY(dte_ids)
          OR $2::uuid = ANY(dte_ids) OR $3::uuid = ANY(dte_ids)`,
      ids,
    );
    expect(ups.every((u) => u.state === 'accepted' && u.attempts === 1)).to.equal(true);
    expect(ups.flatMap((u) => u.dte_ids).sort()).to.deep.equal([...ids].sort());
    // the envelopes as sent and the signed DTEs are kept exactly (the envelope's bytes hash to the
    // digest recorded with it), stored compressed with lz4 where the server has it (elsewhere pglz
    // decides whether to compress at all)
    const [{ lz4 }]: { lz4: boolean }[] = await db().query(
      `SELECT 'lz4' = ANY(enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`,
    );
    const kept: { envio_xml: Buffer; envio_sha256: string; how: string | null }[] = await db().query(
      `SELECT envio_xml, envio_sha256, pg_column_compression(envio_xml) AS how FROM sii_uploads
        WHERE dte_ids && $1::uuid[]`,
      [ids],
    );
    expect(kept).to.have.length(ups.length);
    for (const k of kept) {
      expect(createHash('sha256').update(k.envio_xml).digest('hex')).to.equal(k.envio_sha256);
      if (lz4) expect(k.how).to.equal('lz4');
    }
    const signed: { how: string | null }[] = await db().query(
      `SELECT pg_column_compression(signed_xml) AS how FROM dtes WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    if (lz4) for (const s of signed) expect(s.how).to.equal('lz4');
    // the detail the client reads
    const detail = await call(p.t.url, 'GET', `/dtes/${ids[0]}`, { key: p.o.key });
    expect(detail.body).to.include({ sii_status: 'EPR', track_id: Number(rows[0].track_id) });
  });

  it('a replayed command signs nothing again: the stored XML and the outbox stay as they are', async () => {
    const id = await issue(33);
    const before = await until(id, ['EPR']);
    const cmd: { payload: EmitDteCommand }[] = await db().query(
      `SELECT payload FROM outbox WHERE topic = 'dte.commands' AND message_key = $1`,
      [id],
    );
    const outboxBefore = (await db().query('SELECT count(*)::int AS n FROM outbox'))[0].n;
    const result = await signCommand(
      { dataSource: db(), keys: p.t.deps.keys, logger: p.logger },
      cmd[0].payload,
    );
    expect(result).to.equal('duplicate');
    // a new command (another event id) for a signed document is refused too
    const again = await signCommand(
      { dataSource: db(), keys: p.t.deps.keys, logger: p.logger },
      { ...cmd[0].payload, event_id: '00000000-0000-4000-8000-000000000001' },
    );
    expect(again).to.equal('already_signed');
    expect((await row(id)).signed_xml).to.equal(before.signed_xml);
    expect((await db().query('SELECT count(*)::int AS n FROM outbox'))[0].n).to.equal(outboxBefore);
  });

  it('a document the SII rejects ends RCH (rechazado, reemitir)', async () => {
    await simAdmin(p.t, 'POST', '/admin/triggers', { kind: 'verdict', verdict: 'RCH', env: 'cert' });
    const id = await issue(33);
    const r = await until(id, ['RCH', 'EPR']);
    expect(r.sii_status).to.equal('RCH');
    expect(classify('RCH')).to.include({ terminal: true, categoria: 'rechazado', accion: 'reemitir' });
    const f = await feed(id);
    expect(f.at(-1)).to.equal('RCH');
    expect(f).to.include('sending');
  });

  it('retries a burst of 5xx answers to DTEUpload with the same envelope and still reaches EPR', async () => {
    await simAdmin(p.t, 'POST', '/admin/triggers', {
      kind: 'http-error',
      operation: 'upload',
      status: 503,
      times: 2,
    });
    const id = await issue(33);
    const r = await until(id, ['EPR', 'emision_fallida']);
    expect(r.sii_status).to.equal('EPR');
    const up: { attempts: number; state: string }[] = await db().query(
      'SELECT attempts, state FROM sii_uploads WHERE id = $1',
      [r.upload_id],
    );
    expect(up[0]).to.deep.equal({ attempts: 3, state: 'accepted' });
    expect(await feed(id)).to.not.include('emision_fallida');
  });

  it('more 5xx than the attempt budget ends emision_fallida (requiere_accion) without a track id', async () => {
    await simAdmin(p.t, 'POST', '/admin/triggers', {
      kind: 'http-error',
      operation: 'upload',
      status: 500,
      times: uploaderSettings.maxAttempts,
    });
    const id = await issue(33);
    const r = await until(id, ['emision_fallida', 'EPR']);
    expect(r.sii_status).to.equal('emision_fallida');
    expect(r.track_id).to.equal(null);
    expect(r.sii_glosa).to.match(/transitorio/);
    expect(classify('emision_fallida').categoria).to.equal('requiere_accion');
  });

  it('an upload the SII leaves at -11 for ever ends stuck; refresh-status re-arms the durable poll', async () => {
    await simAdmin(p.t, 'POST', '/admin/triggers', { kind: 'stuck', env: 'cert' });
    const id = await issue(33);
    const r = await until(id, ['stuck', 'EPR']);
    expect(r.sii_status).to.equal('stuck');
    expect(classify('stuck')).to.include({ terminal: false, accion: 'reintentar_consulta' });
    expect(await feed(id)).to.deep.equal(['queued', 'signed', 'sending', '-11', 'stuck']);
    const poll: { state: string; attempts: number }[] = await db().query(
      'SELECT state, attempts FROM sii_polls WHERE upload_id = $1',
      [r.upload_id],
    );
    expect(poll[0]).to.deep.equal({ state: 'stuck', attempts: pollerSettings.maxAttempts });

    const refresh = await call(p.t.url, 'POST', `/dtes/${id}/refresh-status`, { key: p.o.key });
    expect(refresh.status, refresh.text).to.equal(202);
    // polled again from a fresh budget: -11 again, then stuck again
    await eventually('the re-armed poll to end', async () => {
      const f = await feed(id);
      return f.filter((s) => s === 'stuck').length === 2 ? f : undefined;
    });
    expect(await feed(id)).to.deep.equal(['queued', 'signed', 'sending', '-11', 'stuck', '-11', 'stuck']);
  });
});
