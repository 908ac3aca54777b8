/**
 * The whole emission pipeline in one process on the real broker, registry, PostgreSQL and Redis:
 * the api (HTTP, outbox relay, projector), the signer, the sii-uploader and the sii-poller of the
 * workers, and the SII simulator. A client that knows only the HTTP contract issues documents
 * and follows each to its verdict by polling GET /dtes/:id until estado.terminal.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { pipelineTopicSpecs } from '@dte/messaging';
import { SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { startSigner, type Signer } from '@dte/signer';
import { Uploader } from '@dte/sii-uploader';
import { Poller } from '@dte/sii-poller';
import { testMessaging, type TestMessaging } from '../../../test/support/env';
import { startApiPipeline, type ApiPipeline } from '../src/projector/pipeline';
import { call, startTestApi, type TestApi } from './support/test-api';
import { body, emit, orgWithCafs, today, type DteOrg } from './dtes-fixtures';

const logger = pino({ level: process.env.API_TEST_LOG ?? 'silent' });

describe('emission pipeline end to end: POST /dtes to the SII verdict', function () {
  this.timeout(300_000);
  let t: TestApi;
  let tm: TestMessaging;
  let o: DteOrg;
  let pipeline: ApiPipeline;
  let signer: Signer;
  let uploader: Uploader;
  let poller: Poller;

  before(async () => {
    t = await startTestApi({ sim: { autoEnrol: true, timings: { registerMs: 300, stepMs: 100 } } });
    tm = await testMessaging('e2e');
    await tm.messaging.ensureTopics(pipelineTopicSpecs(2));
    const s = tm.messaging.config;
    pipeline = await startApiPipeline(t.db.dataSource, logger, {
      KAFKA_BROKERS: s.brokers.join(','),
      SCHEMA_REGISTRY_URL: s.schemaRegistryUrl,
      KAFKA_TOPIC_PREFIX: s.topicPrefix,
      PIPELINE_PARTITIONS: '2',
    });
    const sii = () => new SiiClient({ endpoints: simulatorEndpoints(t.sim.url), timeoutMs: 10_000 });
    signer = await startSigner({
      dataSource: t.db.dataSource,
      keys: t.deps.keys,
      logger,
      messaging: tm.messaging,
    });
    uploader = new Uploader({
      dataSource: t.db.dataSource,
      keys: t.deps.keys,
      sii: sii(),
      logger,
      settings: {
        maxDocs: 50,
        maxWaitMs: 300,
        maxAttempts: 3,
        retryDelayMs: 200,
        retryMaxDelayMs: 1000,
        leaseMs: 30_000,
        sweepMs: 300,
        concurrency: 2,
      },
    });
    await uploader.start(tm.messaging);
    poller = new Poller({
      dataSource: t.db.dataSource,
      keys: t.deps.keys,
      sii: sii(),
      logger,
      settings: {
        firstDelayMs: 300,
        backoffBaseMs: 200,
        backoffFactor: 1.5,
        backoffMaxMs: 1000,
        maxAttempts: 40,
        tickMs: 100,
        leaseMs: 30_000,
        concurrency: 2,
      },
    });
    await poller.start(tm.messaging);
    o = await orgWithCafs(t, { tipos: [33, 34, 52, 56, 61, 110] });
    await t.db.dataSource.query(
      `UPDATE companies SET resolucion_cert_numero = 0, resolucion_cert_fecha = $2 WHERE id = $1`,
      [o.companyId, today()],
    );
  });
  after(async () => {
    await poller?.stop();
    await uploader?.stop();
    await signer?.stop();
    await pipeline?.stop();
    await tm?.cleanup();
    await t?.close();
  });

  const follow = async (id: string, ms = 90_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const res = await call(t.url, 'GET', `/dtes/${id}`, { key: o.key });
      if ((res.body.estado as { terminal: boolean }).terminal) return res.body;
      if (Date.now() > deadline) throw new Error(`no verdict for ${id}: last ${res.body.sii_status}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  };

  it('issues types 33, 34, 52, 56, 61 and 110 and follows each to EPR by polling; the feed tells the way there', async () => {
    const issued: { id: string; tipo: number }[] = [];
    for (const tipo of [33, 34, 52, 56, 61, 110]) {
      const res = await emit(t, o, body(tipo, o.rut));
      expect(res.status, res.text).to.equal(202);
      issued.push({ id: res.body.id as string, tipo });
    }
    for (const d of issued) {
      const final = await follow(d.id);
      expect(final.sii_status, `${d.tipo}`).to.be.oneOf(['EPR', 'RPR']);
      expect(final.estado).to.include({ terminal: true, categoria: 'aceptado' });
      expect(final.track_id).to.be.a('number');
      const feed = (await call(t.url, 'GET', `/dtes/${d.id}/events`, { key: o.key })).body.data as {
        sii_status: string;
        observed_at: string;
      }[];
      const codes = feed.map((e) => e.sii_status);
      expect(codes[0]).to.equal('queued');
      expect(codes).to.include.members(['signed', 'sending']);
      expect(codes[codes.length - 1]).to.equal(final.sii_status);
      expect(new Set(codes).size, codes.join(',')).to.equal(codes.length);
      const times = feed.map((e) => Date.parse(e.observed_at));
      expect([...times].sort((a, b) => a - b)).to.deep.equal(times);
    }
  });

  it('serves the signed XML, which xmllint reads as the document issued', async () => {
    const res = await emit(t, o, body(33, o.rut, 4321));
    const id = res.body.id as string;
    await follow(id);
    const raw = await fetch(`${t.url}/dtes/${id}/xml`, { headers: { Authorization: `Bearer ${o.key}` } });
    expect(raw.status).to.equal(200);
    expect(raw.headers.get('content-type')).to.match(/^application\/xml/);
    const dir = mkdtempSync(path.join(tmpdir(), 'dte-xml-'));
    const file = path.join(dir, 'dte.xml');
    writeFileSync(file, Buffer.from(await raw.arrayBuffer()));
    const folio = execFileSync('xmllint', [
      '--xpath',
      'string(//*[local-name()="IdDoc"]/*[local-name()="Folio"])',
      file,
    ]).toString();
    const total = execFileSync('xmllint', [
      '--xpath',
      'string(//*[local-name()="MntTotal"])',
      file,
    ]).toString();
    expect(Number(folio)).to.equal(res.body.folio);
    expect(Number(total)).to.equal(res.body.monto_total);
  });

  it('Prefer: wait answers 201 once the real uploader has the track id', async () => {
    const res = await emit(t, o, body(33, o.rut, 999), { headers: { Prefer: 'wait=30' } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.track_id).to.be.a('number');
  });
});
