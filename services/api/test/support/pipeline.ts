/**
 * The whole emission pipeline in one process on the real broker, registry, PostgreSQL and Redis:
 * the api (HTTP, outbox relay, projector), the signer, the sii-uploader and the sii-poller, and
 * the SII simulator; an organization with a CAF of every pipeline type. Shared by the end-to-end
 * test and the printed-form test (documents issued over HTTP until signed or judged).
 */
import pino from 'pino';
import { pipelineTopicSpecs } from '@dte/messaging';
import { SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { startSigner, type Signer } from '@dte/signer';
import { Uploader } from '@dte/sii-uploader';
import { Poller } from '@dte/sii-poller';
import { testMessaging, type TestMessaging } from '../../../../test/support/env';
import { startApiPipeline, type ApiPipeline } from '@dte/pipeline';
import { call, startTestApi, type TestApi } from './test-api';
import { orgWithCafs, today, type DteOrg } from '../dtes-fixtures';

const logger = pino({ level: process.env.API_TEST_LOG ?? 'silent' });

export interface Running {
  t: TestApi;
  o: DteOrg;
  stop(): Promise<void>;
}

/** The api with its relay and projector, the three workers and the simulator, in this process. */
export async function startPipeline(opts: {
  registerMs: number;
  pollAttempts: number;
  env?: Record<string, string>;
}): Promise<Running> {
  const t = await startTestApi({
    ...(opts.env ? { env: opts.env } : {}),
    sim: { autoEnrol: true, timings: { registerMs: opts.registerMs, stepMs: 100 } },
  });
  const tm: TestMessaging = await testMessaging('e2e');
  await tm.messaging.ensureTopics(pipelineTopicSpecs(2));
  const s = tm.messaging.config;
  const pipeline: ApiPipeline = await startApiPipeline(t.db.dataSource, logger, {
    KAFKA_BROKERS: s.brokers.join(','),
    SCHEMA_REGISTRY_URL: s.schemaRegistryUrl,
    KAFKA_TOPIC_PREFIX: s.topicPrefix,
    PIPELINE_PARTITIONS: '2',
  });
  const sii = () => new SiiClient({ endpoints: simulatorEndpoints(t.sim.url), timeoutMs: 10_000 });
  const signer: Signer = await startSigner({
    dataSource: t.db.dataSource,
    keys: t.deps.keys,
    logger,
    messaging: tm.messaging,
  });
  const uploader = new Uploader({
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
  const poller = new Poller({
    dataSource: t.db.dataSource,
    keys: t.deps.keys,
    sii: sii(),
    logger,
    settings: {
      firstDelayMs: 300,
      backoffBaseMs: 200,
      backoffFactor: 1.5,
      backoffMaxMs: 1000,
      maxAttempts: opts.pollAttempts,
      tickMs: 100,
      leaseMs: 30_000,
      concurrency: 2,
    },
  });
  await poller.start(tm.messaging);
  const o = await orgWithCafs(t, { tipos: [33, 34, 46, 52, 56, 61, 110, 112] });
  await t.db.dataSource.query(
    `UPDATE companies SET resolucion_cert_numero = 0, resolucion_cert_fecha = $2 WHERE id = $1`,
    [o.companyId, today()],
  );
  return {
    t,
    o,
    async stop() {
      await poller.stop();
      await uploader.stop();
      await signer.stop();
      await pipeline.stop();
      await tm.cleanup();
      await t.close();
    },
  };
}

/** GET /dtes/:id until estado.terminal (or, with `until`, until that status). */
export async function follow(
  r: Running,
  id: string,
  until?: string,
  ms = 90_000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await call(r.t.url, 'GET', `/dtes/${id}`, { key: r.o.key });
    if (until ? res.body.sii_status === until : (res.body.estado as { terminal: boolean }).terminal)
      return res.body;
    if (Date.now() > deadline)
      throw new Error(`no ${until ?? 'verdict'} for ${id}: last ${res.body.sii_status}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
