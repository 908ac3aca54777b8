import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { body, emit, nextFolio, today } from '../../services/api/test/dtes-fixtures';
import { call, type Answer } from '../../services/api/test/support/test-api';
import { eventually, simAdmin, startPipeline, type Pipeline } from './harness';

/**
 * Backpressure over the real pipeline (api, relay, projector, signer, sii-uploader, sii-poller,
 * Kafka, PostgreSQL, the SII simulator): while the SII refuses every upload (HTTP 503 at the
 * simulator), the documents already accepted wait unsent; once the company's unsent backlog
 * reaches EMISSION_BACKLOG_MAX, POST /dtes, /boletas and /boletas/batch answer 503
 * sii_unavailable with Retry-After, write nothing and take no folio; when the SII comes back the
 * backlog drains (each document uploaded once, accepted) and the refused requests, retried with
 * the same Idempotency-Key, are issued with the next folios.
 */
const BOUND = 5;
const RETRY_AFTER = 7;

describe('backpressure on emission when the SII is failing or slow (503 sii_unavailable, Retry-After)', function () {
  this.timeout(240_000);
  let p: Pipeline;
  const db = () => p.t.db.dataSource;

  before(async () => {
    p = await startPipeline({
      env: {
        BOLETAS_ENABLED: 'cert',
        EMISSION_BACKLOG_MAX: String(BOUND),
        EMISSION_BACKLOG_RETRY_AFTER_SEC: String(RETRY_AFTER),
        EMISSION_BACKLOG_CACHE_MS: '1000',
      },
      tipos: [33, 39],
      // the SII is down for longer than the default attempts: keep retrying, same bytes
      uploader: { maxAttempts: 10_000, retryDelayMs: 150, retryMaxDelayMs: 400 },
    });
  });
  after(async () => p?.close());

  const boleta = () => ({
    tipo_dte: 39,
    rut_emisor: p.o.rut,
    fecha_emision: today(),
    items: [{ nombre: 'Café', cantidad: 1, precio_unitario: 1500, exento: false, monto_item: 1500 }],
  });
  const postBoleta = (key: string): Promise<Answer> =>
    call(p.t.url, 'POST', '/boletas', {
      key: p.o.key,
      json: boleta(),
      headers: { 'Idempotency-Key': key, 'X-Cert-Id': p.o.certId },
    });
  const postBatch = (key: string): Promise<Answer> =>
    call(p.t.url, 'POST', '/boletas/batch', {
      key: p.o.key,
      json: { batch_idempotency_key: key, boletas: [boleta()] },
      headers: { 'X-Cert-Id': p.o.certId },
    });
  const expectRefused = (res: Answer) => {
    expect(res.status, res.text).to.equal(503);
    expect(res.body.code).to.equal('sii_unavailable');
    expect(res.headers.get('retry-after')).to.equal(String(RETRY_AFTER));
    expect(res.body.detail).to.deep.equal({ retryAfterSec: RETRY_AFTER });
  };
  const counts = async () =>
    (
      await db().query(
        `SELECT (SELECT count(*)::int FROM dtes WHERE company_id = $1) AS dtes,
                (SELECT count(*)::int FROM outbox) AS outbox,
                (SELECT count(*)::int FROM dte_events) AS events`,
        [p.o.companyId],
      )
    )[0] as { dtes: number; outbox: number; events: number };

  it('refuses emission above the unsent backlog with nothing written, then drains and issues after the SII returns', async () => {
    // the SII answers every upload (DTE and boleta channels) with HTTP 503
    await simAdmin(p.t, 'POST', '/admin/triggers', {
      kind: 'http-error',
      operation: 'upload',
      status: 503,
      times: 100_000,
      env: 'cert',
    });

    const accepted: { id: string; key: string; folio: number }[] = [];
    for (let i = 0; i < BOUND; i++) {
      const key = randomUUID();
      const res = await emit(p.t, p.o, body(33, p.o.rut, 1000 + i), { idem: key });
      expect(res.status, res.text).to.equal(202);
      accepted.push({ id: res.body.id as string, key, folio: res.body.folio as number });
    }
    expect(accepted.map((a) => a.folio)).to.deep.equal([1, 2, 3, 4, 5]);

    // they are signed and the uploader is trying (and failing) to send them
    await eventually('an upload attempted and refused by the SII', async () => {
      const rows: { attempts: number }[] = await db().query(
        `SELECT attempts FROM sii_uploads WHERE company_id = $1 AND state IN ('claimed', 'sending') AND attempts >= 2`,
        [p.o.companyId],
      );
      return rows.length > 0 ? rows : undefined;
    });
    const before = await counts();
    const folio33 = await nextFolio(p.t, p.o, 33);
    const folio39 = await nextFolio(p.t, p.o, 39);

    // above the bound: every emission route refuses, writes nothing, takes no folio
    const refusedKey = randomUUID();
    expectRefused(await emit(p.t, p.o, body(33, p.o.rut, 2000), { idem: refusedKey }));
    expectRefused(await emit(p.t, p.o, body(33, p.o.rut, 2001)));
    const boletaKey = randomUUID();
    expectRefused(await postBoleta(boletaKey));
    const batchKey = randomUUID();
    expectRefused(await postBatch(batchKey));
    expect(await nextFolio(p.t, p.o, 33)).to.equal(folio33);
    expect(await nextFolio(p.t, p.o, 39)).to.equal(folio39);
    const afterRefusals = await counts();
    expect(afterRefusals.dtes).to.equal(before.dtes);
    expect(afterRefusals.events).to.be.at.least(before.events); // the pipeline's own events only
    const stored = await db().query('SELECT 1 FROM dtes WHERE idempotency_key = ANY($1)', [
      [refusedKey, boletaKey],
    ]);
    expect(stored).to.have.length(0);

    // a retry of a document already accepted still answers it (idempotency comes first)
    const replay = await emit(p.t, p.o, body(33, p.o.rut, 1000), { idem: accepted[0].key });
    expect(replay.status, replay.text).to.equal(202);
    expect(replay.body.id).to.equal(accepted[0].id);

    // none lost while the SII was down: all still waiting, none with a track id
    const waiting: { sii_status: string; track_id: string | null }[] = await db().query(
      'SELECT sii_status, track_id FROM dtes WHERE id = ANY($1)',
      [accepted.map((a) => a.id)],
    );
    expect(waiting).to.have.length(BOUND);
    for (const w of waiting) {
      expect(w.track_id).to.equal(null);
      expect(w.sii_status).to.be.oneOf(['queued', 'signed']);
    }

    // the SII returns: the backlog drains, each document uploaded once and accepted
    await simAdmin(p.t, 'DELETE', '/admin/triggers');
    await eventually(
      'the backlog accepted by the SII',
      async () => {
        const rows: { sii_status: string }[] = await db().query(
          'SELECT sii_status FROM dtes WHERE id = ANY($1)',
          [accepted.map((a) => a.id)],
        );
        return rows.every((r) => r.sii_status === 'EPR') ? rows : undefined;
      },
      90_000,
    );
    const uploads: { dte_id: string; n: number }[] = await db().query(
      `SELECT d AS dte_id, count(*)::int AS n FROM sii_uploads, unnest(dte_ids) d
        WHERE state = 'accepted' AND d = ANY($1) GROUP BY d`,
      [accepted.map((a) => a.id)],
    );
    expect(uploads).to.have.length(BOUND);
    expect(uploads.every((u) => u.n === 1)).to.equal(true);

    // the refused requests, retried with the same keys, are issued with the next folios
    const retried = await emit(p.t, p.o, body(33, p.o.rut, 2000), { idem: refusedKey });
    expect(retried.status, retried.text).to.equal(202);
    expect(retried.body.folio).to.equal(folio33);
    const retriedBoleta = await postBoleta(boletaKey);
    expect(retriedBoleta.status, retriedBoleta.text).to.equal(202);
    expect(retriedBoleta.body.folio).to.equal(folio39);
    const retriedBatch = await postBatch(batchKey);
    expect(retriedBatch.status, retriedBatch.text).to.equal(202);
    expect(retriedBatch.body.queued).to.equal(1);
  });

  it('a slow SII (each upload answered after seconds) holds the backlog at the bound too, and it drains', async () => {
    // start from an empty backlog, with the gate's count refreshed
    await eventually(
      'every earlier document taken by the SII',
      async () => {
        const n = (
          await db().query(
            `SELECT count(*)::int AS n FROM dtes WHERE company_id = $1 AND track_id IS NULL AND sii_status IN ('queued', 'signed')`,
            [p.o.companyId],
          )
        )[0].n as number;
        return n === 0 ? n : undefined;
      },
      60_000,
    );
    await new Promise((r) => setTimeout(r, 1100));
    await simAdmin(p.t, 'POST', '/admin/triggers', {
      kind: 'delay',
      operation: 'upload',
      ms: 4000,
      times: 4,
    });
    const accepted: string[] = [];
    for (let i = 0; i < BOUND; i++) {
      const res = await emit(p.t, p.o, body(33, p.o.rut, 3000 + i));
      expect(res.status, res.text).to.equal(202);
      accepted.push(res.body.id as string);
    }
    // the envelope is at the SII, unanswered; the gate's next count (after its 1 s reuse) reads the
    // database, where the documents still have no track id
    await eventually('an upload in flight at the slow SII', async () => {
      const rows: unknown[] = await db().query(
        `SELECT 1 FROM sii_uploads WHERE dte_ids && $1::uuid[] AND state = 'sending'`,
        [accepted],
      );
      return rows.length > 0 ? rows : undefined;
    });
    await new Promise((r) => setTimeout(r, 1100));
    const folio = await nextFolio(p.t, p.o, 33);
    expectRefused(await emit(p.t, p.o, body(33, p.o.rut, 3100)));
    expect(await nextFolio(p.t, p.o, 33)).to.equal(folio);
    await eventually(
      'the slow uploads answered and the documents accepted',
      async () => {
        const rows: { sii_status: string }[] = await db().query(
          'SELECT sii_status FROM dtes WHERE id = ANY($1)',
          [accepted],
        );
        return rows.every((r) => r.sii_status === 'EPR') ? rows : undefined;
      },
      90_000,
    );
    await new Promise((r) => setTimeout(r, 1100));
    const after = await emit(p.t, p.o, body(33, p.o.rut, 3101));
    expect(after.status, after.text).to.equal(202);
    expect(after.body.folio).to.equal(folio);
  });
});
