/**
 * The api's side of the pipeline on the real broker and registry: the outbox relay publishes what
 * POST /dtes and refresh-status commit, and the projector applies dte-status records (out of
 * order, replayed) to what the HTTP reads show. The relay's own rules (late commits, poison rows,
 * one active relay, claims' retention): packages/pipeline/test/outbox-relay.test.ts.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { classify } from '@dte/status';
import {
  PIPELINE_SCHEMAS,
  PIPELINE_TOPICS,
  pipelineTopicSpecs,
  type AvroProducer,
  type IncomingMessage,
} from '@dte/messaging';
import { testMessaging, type TestMessaging } from '../../../test/support/env';
import { startOutboxRelay, type OutboxRelay } from '@dte/pipeline';
import { startProjector, type Projector } from '@dte/pipeline';
import type { DteStatusRecord } from '@dte/pipeline';
import { call, startTestApi, type TestApi } from './support/test-api';
import { body, emit, expectSchema, orgWithCafs, type DteOrg } from './dtes-fixtures';
import { until } from '../../../test/support/until';

const logger = pino({ level: process.env.API_TEST_LOG ?? 'silent' });

describe('pipeline (api side) on the real broker: outbox relay, dte-status projector, refresh-status', function () {
  this.timeout(240_000);
  let t: TestApi;
  let tm: TestMessaging;
  let o: DteOrg;
  let relay: OutboxRelay;
  let projector: Projector;
  let producer: AvroProducer;
  const seen: IncomingMessage<Record<string, unknown>>[] = [];

  before(async () => {
    t = await startTestApi();
    tm = await testMessaging('pipe');
    await tm.messaging.ensureTopics(pipelineTopicSpecs(3));
    const watcher = await tm.messaging.createConsumer({
      groupId: tm.messaging.topic(`watch-${randomUUID()}`),
      topics: [PIPELINE_TOPICS.commands, PIPELINE_TOPICS.status, PIPELINE_TOPICS.uploaded],
      fromBeginning: true,
      maxWaitTimeInMs: 200,
    });
    await watcher.run<Record<string, unknown>>(async (m) => {
      seen.push(m);
    });
    relay = await startOutboxRelay({
      dataSource: t.db.dataSource,
      messaging: tm.messaging,
      logger,
      pollMs: 200,
      lockRetryMs: 300,
    });
    projector = await startProjector({ dataSource: t.db.dataSource, messaging: tm.messaging, logger });
    producer = await tm.messaging.createProducer();
    o = await orgWithCafs(t, { tipos: [33] });
  });
  after(async () => {
    await relay?.stop();
    await projector?.stop();
    await tm?.cleanup();
    await t?.close();
  });

  const get = (path: string) => call(t.url, 'GET', path, { key: o.key });
  const issue = async () => {
    const res = await emit(t, o, body(33, o.rut));
    expect(res.status, res.text).to.equal(202);
    return res.body as { id: string; folio: number };
  };
  const status = (
    doc: { id: string; folio: number },
    sii_status: string,
    observedAt: Date,
    extra: Partial<DteStatusRecord> = {},
  ): DteStatusRecord => ({
    event_id: randomUUID(),
    dte_id: doc.id,
    organization_id: o.orgId,
    sii_env: 'cert',
    tipo_dte: 33,
    folio: doc.folio,
    sii_status,
    sii_glosa: null,
    track_id: null,
    observed_at: observedAt.toISOString(),
    imported: false,
    source: 'sii-poller',
    ...extra,
  });
  const publish = (recs: DteStatusRecord[], key?: string) =>
    producer.send({
      topic: PIPELINE_TOPICS.status,
      schema: PIPELINE_SCHEMAS[PIPELINE_TOPICS.status],
      messages: recs.map((r) => ({ key: key ?? r.dte_id, value: r })),
    });
  /** a record for a document nobody holds, on `key`'s partition: once it is claimed, all before it were handled */
  const barrier = async (key: string) => {
    const marker = status({ id: randomUUID(), folio: 0 }, 'queued', new Date());
    await publish([marker], key);
    await until(
      'the projector to pass the barrier',
      async () =>
        (await t.db.dataSource.query('SELECT 1 FROM processed_events WHERE event_id = $1', [marker.event_id]))
          .length > 0,
    );
  };
  const events = async (id: string) =>
    (await get(`/dtes/${id}/events`)).body.data as {
      event_id: string;
      sii_status: string;
      glosa: string | null;
      observed_at: string;
    }[];

  it('publishes the command and the queued status of an emission once committed; the feed keeps one queued', async () => {
    const doc = await issue();
    const cmd = await until('dte.commands', async () =>
      seen.find((m) => m.topic === PIPELINE_TOPICS.commands && m.value?.dte_id === doc.id),
    );
    expect(cmd.key).to.equal(doc.id);
    expect(cmd.value).to.include({
      folio: doc.folio,
      tipo_dte: 33,
      sii_env: 'cert',
      certificate_id: o.certId,
      company_id: o.companyId,
    });
    const st = await until('dte-status queued', async () =>
      seen.find((m) => m.topic === PIPELINE_TOPICS.status && m.value?.dte_id === doc.id),
    );
    expect(st.key).to.equal(doc.id);
    expect(st.value).to.include({ sii_status: 'queued', source: 'api' });
    await until(
      'outbox marked published',
      async () =>
        (
          await t.db.dataSource.query(
            'SELECT 1 FROM outbox WHERE message_key = $1 AND published_at IS NULL',
            [doc.id],
          )
        ).length === 0,
    );
    // the projector has read past the queued record (same partition) ...
    await barrier(doc.id);
    const feed = await events(doc.id);
    expect(feed.map((e) => e.sii_status)).to.deep.equal(['queued']);
    // ... and left it to the emission's statement, which wrote its feed row: no claim of its own
    expect(feed[0]!.event_id).to.equal(st.value!.event_id);
    expect(
      await t.db.dataSource.query('SELECT 1 FROM processed_events WHERE event_id = $1', [st.value!.event_id]),
    ).to.deep.equal([]);
  });

  it('applies out-of-order records without going backwards, and a replay adds nothing', async () => {
    const doc = await issue();
    const t0 = Date.now();
    const sending = status(doc, 'sending', new Date(t0 + 1000), { track_id: '4242', source: 'sii-uploader' });
    const sok = status(doc, 'SOK', new Date(t0 + 2000), { track_id: '4242', sii_glosa: 'Schema Validado' });
    const epr = status(doc, 'EPR', new Date(t0 + 3000), { track_id: '4242', sii_glosa: 'Envio Procesado' });
    await publish([epr, sok, sending]); // newest first
    const detail = await until('EPR in the detail', async () => {
      const d = await get(`/dtes/${doc.id}`);
      return d.body.sii_status === 'EPR' && d.body;
    });
    expect(detail).to.include({ sii_glosa: 'Envio Procesado', track_id: 4242 });
    expectSchema('dte-detail.schema.json', detail);
    expect(detail.estado).to.deep.equal(classify('EPR'));
    expect((detail.estado as { terminal: boolean }).terminal).to.equal(true);
    await barrier(doc.id);
    let feed = await events(doc.id);
    expect(feed.map((e) => e.sii_status)).to.deep.equal(['queued', 'sending', 'SOK', 'EPR']);
    expect(feed.map((e) => e.glosa)).to.deep.equal([null, null, 'Schema Validado', 'Envio Procesado']);
    // replay (same event ids), and a re-publication of SOK under a new event id
    await publish([sending, sok, epr, { ...sok, event_id: randomUUID() }]);
    await barrier(doc.id);
    feed = await events(doc.id);
    expect(feed).to.have.length(4);
    expect((await get(`/dtes/${doc.id}`)).body.sii_status).to.equal('EPR');
    // a late non-terminal record never replaces the verdict
    await publish([status(doc, 'PDR', new Date(t0 + 9000))]);
    await barrier(doc.id);
    expect((await get(`/dtes/${doc.id}`)).body.sii_status).to.equal('EPR');
    expect((await events(doc.id)).map((e) => e.sii_status)).to.deep.equal([
      'queued',
      'sending',
      'SOK',
      'EPR',
    ]);
  });

  it('keeps one feed entry for a status re-published under new event ids and instants (worker restarts)', async () => {
    const doc = await issue();
    const t0 = Date.now();
    await publish([
      status(doc, 'signed', new Date(t0 + 1000), { source: 'signer' }),
      status(doc, 'signed', new Date(t0 + 2000), { source: 'signer' }),
      status(doc, 'sending', new Date(t0 + 3000), { track_id: '31', source: 'sii-uploader' }),
      status(doc, 'signed', new Date(t0 + 500), { source: 'signer' }), // late copy, older
      status(doc, 'sending', new Date(t0 + 3500), { track_id: '31', source: 'sii-uploader' }),
    ]);
    await barrier(doc.id);
    expect((await events(doc.id)).map((e) => e.sii_status)).to.deep.equal(['queued', 'signed', 'sending']);
    expect((await get(`/dtes/${doc.id}`)).body).to.include({ sii_status: 'sending', track_id: 31 });
  });

  it('classifies an unknown SII code as en_proceso / contactar_soporte, never success', async () => {
    const doc = await issue();
    await publish([
      status(doc, '106', new Date(Date.now() + 1000), { track_id: '777', sii_glosa: 'Codigo nuevo' }),
    ]);
    const d = await until('106 applied', async () => {
      const r = await get(`/dtes/${doc.id}`);
      return r.body.sii_status === '106' && r.body;
    });
    expect(d.estado).to.include({
      code: '106',
      terminal: false,
      categoria: 'en_proceso',
      accion: 'contactar_soporte',
    });
    const list = await get('/dtes?sii_status=EPR');
    expect((list.body.data as { id: string }[]).map((r) => r.id)).to.not.include(doc.id);
  });

  it('Prefer: wait=N answers 201 once the uploader reports the track id through dte-status', async () => {
    const key = randomUUID();
    const pending = emit(t, o, body(33, o.rut, 2468), { idem: key, headers: { Prefer: 'wait=15' } });
    const row: { id: string; folio: string }[] = await until('the row', async () => {
      const r = await t.db.dataSource.query('SELECT id, folio FROM dtes WHERE idempotency_key = $1', [key]);
      return r.length > 0 && r;
    });
    await publish([
      status({ id: row[0].id, folio: Number(row[0].folio) }, 'sending', new Date(Date.now() + 500), {
        track_id: '9001',
        source: 'sii-uploader',
      }),
    ]);
    const res = await pending;
    expect(res.status).to.equal(201);
    expect(res.body).to.include({ id: row[0].id, sii_status: 'sending', track_id: 9001 });
  });

  it('Prefer: wait=N stops waiting with 202 when the upload fails (emision_fallida)', async () => {
    const key = randomUUID();
    const started = Date.now();
    const pending = emit(t, o, body(33, o.rut, 1357), { idem: key, headers: { Prefer: 'wait=20' } });
    const row: { id: string; folio: string }[] = await until('the row', async () => {
      const r = await t.db.dataSource.query('SELECT id, folio FROM dtes WHERE idempotency_key = $1', [key]);
      return r.length > 0 && r;
    });
    await publish([
      status({ id: row[0].id, folio: Number(row[0].folio) }, 'emision_fallida', new Date(Date.now() + 500), {
        source: 'sii-uploader',
        sii_glosa: 'upload refused',
      }),
    ]);
    const res = await pending;
    expect(res.status).to.equal(202);
    expect(res.body).to.include({ id: row[0].id, sii_status: 'emision_fallida' });
    expect(res.body.estado).to.include({ categoria: 'requiere_accion' });
    expect(Date.now() - started).to.be.below(15_000);
  });

  it('refresh-status: 409 without a track id, 202 + a dte.uploaded refresh record for stuck, 200 when nothing to do, no_cert', async () => {
    const refresh = (id: string) =>
      call(t.url, 'POST', `/dtes/${id}/refresh-status`, { key: o.key, headers: { 'X-Cert-Id': o.certId } });
    const queued = await issue();
    let res = await refresh(queued.id);
    expect(res.status).to.equal(409);
    expect(res.body).to.include({
      code: 'dte.refresh_status.no_track_id',
      next_action: 'wait_for_emit_workflow',
    });

    const failed = await issue();
    await publish([
      status(failed, 'emision_fallida', new Date(Date.now() + 500), { source: 'sii-uploader' }),
    ]);
    await until(
      'emision_fallida',
      async () => (await get(`/dtes/${failed.id}`)).body.sii_status === 'emision_fallida',
    );
    res = await refresh(failed.id);
    expect(res.status).to.equal(409);
    expect(res.body).to.include({ code: 'dte.refresh_status.no_track_id', next_action: 'operator_review' });

    const stuck = await issue();
    const t0 = Date.now();
    await publish([
      status(stuck, 'sending', new Date(t0 + 100), { track_id: '5550', source: 'sii-uploader' }),
      status(stuck, 'stuck', new Date(t0 + 200), { track_id: '5550' }),
    ]);
    const d = await until('stuck', async () => {
      const r = await get(`/dtes/${stuck.id}`);
      return r.body.sii_status === 'stuck' && r.body;
    });
    expect(d.estado).to.include({
      terminal: false,
      poll_activo: false,
      categoria: 'requiere_accion',
      accion: 'reintentar_consulta',
    });
    res = await refresh(stuck.id);
    expect(res.status).to.equal(202);
    expect(res.body).to.deep.equal({ id: stuck.id, status: 'refresh_enqueued' });
    expectSchema('dte-refresh-status.schema.json', res.body);
    const req = await until('the re-poll request on dte.uploaded', async () =>
      seen.find(
        (m) =>
          m.topic === PIPELINE_TOPICS.uploaded &&
          (m.value?.dte_ids as string[] | undefined)?.includes(stuck.id),
      ),
    );
    expect(req.value).to.include({
      refresh: true,
      track_id: '5550',
      certificate_id: o.certId,
      organization_id: o.orgId,
      sii_env: 'cert',
      rut_emisor: o.rut,
    });
    expect(req.value!.dte_ids).to.deep.equal([stuck.id]);
    expect(req.key).to.equal(req.value!.upload_id);

    // the poller's next observation moves it on (newer, not a lower stage)
    await publish([
      status(stuck, 'EPR', new Date(t0 + 5000), { track_id: '5550', sii_glosa: 'Envio Procesado' }),
    ]);
    await until('EPR after refresh', async () => (await get(`/dtes/${stuck.id}`)).body.sii_status === 'EPR');
    res = await refresh(stuck.id);
    expect(res.status).to.equal(200);
    expect(res.body).to.include({ id: stuck.id, status: 'nothing_to_do', sii_status: 'EPR' });
    expectSchema('dte-refresh-status.schema.json', res.body);

    const noPerm = await issue();
    const t1 = Date.now();
    await publish([
      status(noPerm, 'sending', new Date(t1 + 100), { track_id: '5551', source: 'sii-uploader' }),
      status(noPerm, 'sin_permiso_sii', new Date(t1 + 300), { track_id: '5551' }),
    ]);
    await until(
      'sin_permiso_sii',
      async () => (await get(`/dtes/${noPerm.id}`)).body.sii_status === 'sin_permiso_sii',
    );
    await t.db.dataSource.query('UPDATE certificates SET deleted_at = now() WHERE organization_id = $1', [
      o.orgId,
    ]);
    res = await refresh(noPerm.id);
    expect(res.status).to.equal(409);
    expect(res.body.code).to.equal('dte.refresh_status.no_cert');
    await t.db.dataSource.query('UPDATE certificates SET deleted_at = NULL WHERE organization_id = $1', [
      o.orgId,
    ]);
    res = await refresh(noPerm.id);
    expect(res.status).to.equal(202);
    res = await call(t.url, 'POST', `/dtes/${randomUUID()}/refresh-status`, { key: o.key });
    expect(res.status).to.equal(404);
  });
});
