import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { nextFolio, today, type DteOrg } from '../../services/api/test/dtes-fixtures';
import { call, startTestApi, type Answer, type TestApi } from '../../services/api/test/support/test-api';
import { enrol, eventually, simAdmin, startPipeline, type Pipeline } from '../pipeline/harness';

const SCHEMAS = process.env.SII_SCHEMAS_DIR ?? path.resolve(__dirname, '../../../shared/sii/schemas');

function boleta(tipo: 39 | 41, rut: string, items?: Record<string, unknown>[]): Record<string, unknown> {
  return {
    tipo_dte: tipo,
    rut_emisor: rut,
    fecha_emision: today(),
    items: items ?? [
      { nombre: 'Café', cantidad: 2, precio_unitario: 1500, exento: tipo === 41, monto_item: 3000 },
      { nombre: 'Libro', cantidad: 1, precio_unitario: 7990, exento: true, monto_item: 7990 },
    ],
  };
}

function post(
  t: TestApi,
  o: DteOrg,
  p: string,
  json: unknown,
  idem: string | null = randomUUID(),
): Promise<Answer> {
  const headers: Record<string, string> = { 'X-Cert-Id': o.certId };
  if (idem) headers['Idempotency-Key'] = idem;
  return call(t.url, 'POST', p, { key: o.key, json, headers });
}

describe('boletas 39/41 behind BOLETAS_ENABLED, through the whole pipeline and the SII boleta REST channel', function () {
  this.timeout(600_000);

  describe('flag off (the default)', function () {
    let t: TestApi;
    before(async () => {
      t = await startTestApi();
    });
    after(() => t?.close());

    it('answers exactly the 404 of a path that does not exist, for every boleta route', async () => {
      const s = await t.seed();
      const strip = (a: Answer) => {
        const b = { ...(a.body as Record<string, unknown>) };
        delete b.request_id;
        b.message = String(b.message).replace(/No route \S+ \S+/, 'No route');
        return { status: a.status, body: b };
      };
      const none = strip(await call(t.url, 'GET', '/no-such-thing', { key: s.api_key }));
      expect(none.status).to.equal(404);
      expect(none.body.code).to.equal('not_found');
      for (const [m, p] of [
        ['POST', '/boletas'],
        ['GET', '/boletas'],
        ['GET', `/boletas/${randomUUID()}`],
        ['GET', `/boletas/${randomUUID()}/xml`],
        ['POST', '/boletas/batch'],
        ['GET', `/boletas/batch/${randomUUID()}`],
        ['POST', '/bhe'],
        ['GET', '/bhe'],
        ['GET', `/bhe/${randomUUID()}`],
        ['POST', `/bhe/${randomUUID()}/anular`],
      ] as const) {
        const a = await call(t.url, m, p, { key: s.api_key, ...(m === 'POST' ? { json: {} } : {}) });
        expect(strip(a), `${m} ${p}`).to.deep.equal(none);
      }
      const doc = await call(t.url, 'GET', '/openapi.json');
      expect(
        Object.keys((doc.body as { paths: object }).paths).some(
          (k) => k.startsWith('/boletas') || k.startsWith('/bhe'),
        ),
      ).to.equal(false);
    });
  });

  describe('flag on', function () {
    let p: Pipeline;
    const t = () => p.t;
    const o = () => p.o;
    const db = () => p.t.db.dataSource;
    const row = async (id: string) =>
      (
        await db().query(
          'SELECT sii_status, sii_glosa, track_id, folio, signed_xml FROM dtes WHERE id = $1',
          [id],
        )
      )[0] as {
        sii_status: string;
        track_id: string | null;
        folio: string;
        signed_xml: string | null;
      };

    before(async () => {
      p = await startPipeline({
        env: { BOLETAS_ENABLED: 'cert' },
        tipos: [39, 41],
        hasta: 1200,
        uploader: { maxDocs: 500, maxWaitMs: 300, concurrency: 2 },
      });
      await enrol(p.t, p.o);
    });
    after(() => p?.close());

    it('issues a single 39 with totals derived from gross items (declared ones ignored) that the SII accepts (EPR)', async () => {
      const res = await post(t(), o(), '/boletas', {
        ...boleta(39, o().rut),
        monto_total: 1,
        iva: 5,
        monto_neto: 7,
      });
      expect(res.status, res.text).to.equal(202);
      // taxable 3000 -> neto round(3000/1.19) = 2521, iva 479; exempt 7990 whole
      expect(res.body).to.include({
        tipo_dte: 39,
        folio: 1,
        status: 'queued',
        sii_status: 'queued',
        rut_receptor: null,
        monto_neto: 2521,
        iva: 479,
        monto_exento: 7990,
        monto_total: 10990,
        sii_env: 'cert',
      });
      const id = res.body.id as string;
      expect(res.body.links).to.deep.equal({
        self: `/api/v1/boletas/${id}`,
        xml: `/api/v1/boletas/${id}/xml`,
      });
      const done = await eventually('boleta EPR', async () => {
        const r = await row(id);
        return r.sii_status === 'EPR' ? r : undefined;
      });
      expect(done.track_id).to.match(/^\d+$/);
      // log correlation: the POST's request id is stored with the boleta and on its first messages
      const requestId = res.headers.get('x-request-id');
      expect(requestId).to.match(/^req_/);
      const [stored] = await db().query('SELECT request_id FROM dtes WHERE id = $1', [id]);
      expect(stored.request_id).to.equal(requestId);
      const first: { topic: string; headers: Record<string, string> }[] = await db().query(
        `SELECT topic, headers FROM outbox WHERE message_key = $1
            AND (topic = 'dte.commands' OR (topic = 'dte-status' AND payload->>'sii_status' = 'queued')) ORDER BY id`,
        [id],
      );
      expect(first.map((r) => r.headers)).to.deep.equal([
        { 'x-dte-id': id, 'x-request-id': requestId },
        { 'x-dte-id': id, 'x-request-id': requestId },
      ]);
      const detail = await call(t().url, 'GET', `/boletas/${id}`, { key: o().key });
      expect(detail.body).to.include({ id, sii_status: 'EPR', track_id: Number(done.track_id) });
      expect(detail.body.created_at).to.be.a('string');
      const xml = await fetch(`${t().url}/boletas/${id}/xml`, {
        headers: { Authorization: `Bearer ${o().key}` },
      });
      expect(xml.status).to.equal(200);
      expect(xml.headers.get('content-type')).to.match(/application\/xml/);
      const text = Buffer.from(await xml.arrayBuffer()).toString('latin1');
      expect(text).to.match(
        /^<DTE xmlns="http:\/\/www\.sii\.cl\/SiiDte" version="1\.0"><Documento ID="F1T39">/,
      );
      expect(text).to.contain('<IndServicio>3</IndServicio>').and.contain('<RUTRecep>66666666-6</RUTRecep>');
      // the SII received it through the boleta REST channel (EnvioBOLETA), not DTEUpload
      const uploads = await simAdmin<{ trackId: string; verdict: string; fileName: string }[]>(
        t(),
        'GET',
        '/admin/cert/uploads',
      );
      const mine = uploads.find((u) => Number(u.trackId) === Number(done.track_id));
      expect(mine?.verdict).to.equal('EPR');
      const feed = (
        await db().query('SELECT sii_status FROM dte_events WHERE dte_id = $1 ORDER BY observed_at, id', [id])
      ).map((r: { sii_status: string }) => r.sii_status);
      expect(feed.slice(0, 3)).to.deep.equal(['queued', 'signed', 'sending']);
      expect(feed.at(-1)).to.equal('EPR');
      const list = await call(t().url, 'GET', '/boletas?limit=500', { key: o().key });
      expect(list.body.next_cursor).to.equal(null);
      expect((list.body.boletas as { id: string }[]).map((b) => b.id)).to.include(id);
    });

    it('a batch the SII rejects counts as failed (RCH per boleta from the REST estado); a 5xx burst on the envío is retried with the same bytes', async () => {
      await simAdmin(t(), 'POST', '/admin/triggers', { kind: 'verdict', verdict: 'RCH', env: 'cert' });
      const res = await post(
        t(),
        o(),
        '/boletas/batch',
        {
          batch_idempotency_key: randomUUID(),
          boletas: [boleta(39, o().rut), boleta(39, o().rut), boleta(39, o().rut)],
        },
        null,
      );
      expect(res.status, res.text).to.equal(202);
      // every boleta of the batch carries the request id of the POST that submitted it
      const ids: { request_id: string | null }[] = await db().query(
        'SELECT request_id FROM dtes WHERE batch_id = $1',
        [res.body.batchId],
      );
      expect(ids.map((r) => r.request_id)).to.deep.equal(Array(3).fill(res.headers.get('x-request-id')));
      const st = await eventually('rejected batch completed', async () => {
        const s = await call(t().url, 'GET', `/boletas/batch/${res.body.batchId}`, { key: o().key });
        return s.body.status === 'completed' ? s.body : undefined;
      });
      expect(st).to.include({ total: 3, queued: 0, sending: 0, done: 0, failed: 3 });
      const estados: { sii_status: string; sii_glosa: string }[] = await db().query(
        'SELECT sii_status, sii_glosa FROM dtes WHERE batch_id = $1',
        [res.body.batchId],
      );
      expect(estados.map((e) => e.sii_status)).to.deep.equal(['RCH', 'RCH', 'RCH']);
      expect(estados[0]!.sii_glosa).to.match(/rechazo forzado/);

      await simAdmin(t(), 'POST', '/admin/triggers', {
        kind: 'http-error',
        operation: 'upload',
        status: 503,
        times: 2,
      });
      const one = await post(t(), o(), '/boletas', boleta(39, o().rut));
      const r = await eventually('boleta after 5xx', async () => {
        const x = await row(one.body.id as string);
        return ['EPR', 'emision_fallida', 'RCH'].includes(x.sii_status) ? x : undefined;
      });
      expect(r.sii_status).to.equal('EPR');
      const up: { attempts: number; channel: string }[] = await db().query(
        'SELECT attempts, channel FROM sii_uploads WHERE id = (SELECT upload_id FROM dtes WHERE id = $1)',
        [one.body.id],
      );
      expect(up[0]).to.deep.equal({ attempts: 3, channel: 'boleta' });
    });

    it('documents the boleta routes in the OpenAPI document when enabled', async () => {
      const doc = await call(t().url, 'GET', '/openapi.json');
      const paths = Object.keys((doc.body as { paths: object }).paths);
      expect(paths).to.include.members([
        '/boletas',
        '/boletas/batch',
        '/boletas/batch/{id}',
        '/boletas/{id}',
        '/boletas/{id}/xml',
      ]);
    });

    it('refuses a 41 with a taxable item and a line that disagrees, using no folio', async () => {
      const before41 = await nextFolio(t(), o(), 41);
      const bad = await post(
        t(),
        o(),
        '/boletas',
        boleta(41, o().rut, [
          { nombre: 'Servicio', cantidad: 1, precio_unitario: 1000, exento: false, monto_item: 1000 },
        ]),
      );
      expect(bad.status).to.equal(422);
      expect(bad.body.code).to.equal('dte.41.afecto_not_allowed');
      const arith = await post(
        t(),
        o(),
        '/boletas',
        boleta(41, o().rut, [
          { nombre: 'Servicio', cantidad: 3, precio_unitario: 1000, exento: true, monto_item: 2999 },
        ]),
      );
      expect(arith.status).to.equal(400);
      expect(arith.body.code).to.equal('amount_arithmetic');
      expect((arith.body.detail as { expected: number }).expected).to.equal(3000);
      expect(await nextFolio(t(), o(), 41)).to.equal(before41);
      // the same key and body answer the same boleta; another body under it conflicts
      const key = randomUUID();
      const a = await post(
        t(),
        o(),
        '/boletas',
        boleta(41, o().rut, [
          { nombre: 'Clase', cantidad: 1, precio_unitario: 5000, exento: true, monto_item: 5000 },
        ]),
        key,
      );
      const b = await post(
        t(),
        o(),
        '/boletas',
        boleta(41, o().rut, [
          { nombre: 'Clase', cantidad: 1, precio_unitario: 5000, exento: true, monto_item: 5000 },
        ]),
        key,
      );
      expect(a.status).to.equal(202);
      expect(b.body.id).to.equal(a.body.id);
      expect(a.body).to.include({ monto_exento: 5000, monto_total: 5000, monto_neto: 0, iva: 0 });
      const c = await post(t(), o(), '/boletas', boleta(39, o().rut), key);
      expect(c.status).to.equal(409);
      expect(c.body.code).to.equal('idempotency_conflict');
    });

    it('refuses a batch over 1000, one with repeated positions or an invalid entry (validation_error), using no folio', async () => {
      const f39 = await nextFolio(t(), o(), 39);
      const over = await post(
        t(),
        o(),
        '/boletas/batch',
        {
          batch_idempotency_key: randomUUID(),
          boletas: Array.from({ length: 1001 }, () => boleta(39, o().rut)),
        },
        null,
      );
      expect(over.status).to.equal(422);
      expect(over.body).to.include({ code: 'boleta.batch.exceeds_max' });
      expect(over.body.detail).to.include({ max: 1000 });
      const repeated = await post(
        t(),
        o(),
        '/boletas/batch',
        {
          batch_idempotency_key: randomUUID(),
          boletas: [
            { ...boleta(39, o().rut), position: 0 },
            { ...boleta(39, o().rut), position: 0 },
            boleta(41, o().rut, [
              { nombre: 'X', cantidad: 1, precio_unitario: 10, exento: false, monto_item: 10 },
            ]),
          ],
        },
        null,
      );
      expect(repeated.status).to.equal(422);
      expect(repeated.body.code).to.equal('validation_error');
      const errors = (repeated.body.detail as { errors: { index: number; code: string }[] }).errors;
      expect(errors.map((e) => [e.index, e.code])).to.deep.equal([
        [1, 'position_repeated'],
        [2, 'dte.41.afecto_not_allowed'],
      ]);
      // the spec's errors[] in the body itself (detail keeps it too)
      expect(repeated.body.errors).to.deep.equal(errors);
      expect(await nextFolio(t(), o(), 39)).to.equal(f39);
    });

    it('issues a 1000-boleta batch (39 and 41 mixed) to the SII verdict, once each, idempotent by key', async () => {
      const started = Date.now();
      const key = `batch-${randomUUID()}`;
      const boletas = Array.from({ length: 1000 }, (_, i) =>
        i % 4 === 3
          ? boleta(41, o().rut, [
              {
                nombre: `Servicio ${i}`,
                cantidad: 1,
                precio_unitario: 1000 + i,
                exento: true,
                monto_item: 1000 + i,
              },
            ])
          : boleta(39, o().rut, [
              {
                nombre: `Producto ${i}`,
                cantidad: 1,
                precio_unitario: 1190 + i,
                exento: false,
                monto_item: 1190 + i,
              },
            ]),
      );
      const res = await post(t(), o(), '/boletas/batch', { batch_idempotency_key: key, boletas }, null);
      expect(res.status, res.text).to.equal(202);
      expect(res.body.queued).to.equal(1000);
      const batchId = res.body.batchId as string;
      const again = await post(t(), o(), '/boletas/batch', { batch_idempotency_key: key, boletas }, null);
      expect(again.body).to.deep.equal({ batchId, queued: 1000 });
      const conflict = await post(
        t(),
        o(),
        '/boletas/batch',
        { batch_idempotency_key: key, boletas: boletas.slice(1) },
        null,
      );
      expect(conflict.status).to.equal(409);
      expect(conflict.body).to.include({ code: 'boleta.batch.idempotency_conflict' });
      expect(conflict.body.detail).to.deep.equal({ batchId });

      const first = await call(t().url, 'GET', `/boletas/batch/${batchId}`, { key: o().key });
      expect(first.body).to.include({ batchId, status: 'processing', total: 1000 });
      const done = await eventually(
        'batch completed',
        async () => {
          const s = await call(t().url, 'GET', `/boletas/batch/${batchId}`, { key: o().key });
          return s.body.status === 'completed' ? s.body : undefined;
        },
        300_000,
      );
      expect(done).to.include({ total: 1000, queued: 0, sending: 0, done: 1000, failed: 0 });
      expect(done.completedAt).to.be.a('string');
      // each boleta once, each folio once, all accepted, in envelopes of at most 500
      const rows: { n: number; folios: number; uploads: number; estados: string[] }[] = await db().query(
        `SELECT count(*)::int AS n, count(DISTINCT (tipo_dte, folio))::int AS folios,
                count(DISTINCT upload_id)::int AS uploads, array_agg(DISTINCT sii_status) AS estados
           FROM dtes WHERE batch_id = $1`,
        [batchId],
      );
      expect(rows[0]).to.deep.include({ n: 1000, folios: 1000, estados: ['EPR'] });
      // EnvioBOLETA holds at most 500: never one envelope for the whole batch
      expect(rows[0]!.uploads).to.be.at.least(2);
      const sizes: { n: number }[] = await db().query(
        `SELECT cardinality(dte_ids) AS n FROM sii_uploads WHERE channel = 'boleta' AND id IN (SELECT upload_id FROM dtes WHERE batch_id = $1)`,
        [batchId],
      );
      expect(Math.max(...sizes.map((x) => x.n))).to.be.at.most(500);
      const sim = await simAdmin<{ trackId: string; documents: { folio: number; tipoDte: number }[] }[]>(
        t(),
        'GET',
        '/admin/cert/uploads',
      );
      const sent = sim.flatMap((u) => u.documents.map((d) => `${d.tipoDte}|${d.folio}`));
      expect(new Set(sent).size).to.equal(sent.length);
      console.log(
        `      (1000-boleta batch: ${((Date.now() - started) / 1000).toFixed(1)} s to the verdict)`,
      );
    });

    it('a signed boleta of the pipeline, put in an EnvioBOLETA by the uploader, passes xmllint with the official schema', async () => {
      const up: { envio_xml: Buffer }[] = await db().query(
        `SELECT envio_xml FROM sii_uploads WHERE channel = 'boleta' AND envio_xml IS NOT NULL LIMIT 1`,
      );
      expect(up).to.have.length(1);
      const dir = mkdtempSync(path.join(tmpdir(), 'boleta-envio-'));
      try {
        const f = path.join(dir, 'envio.xml');
        writeFileSync(f, up[0]!.envio_xml);
        const r = spawnSync(
          'xmllint',
          ['--noout', '--schema', path.join(SCHEMAS, 'EnvioBOLETA_v11.xsd'), f],
          {
            encoding: 'utf8',
          },
        );
        expect(r.status, r.stderr).to.equal(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
});
