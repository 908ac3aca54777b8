/**
 * Boletas reach the webhooks like any document: the webhooks service (in this process) derives
 * deliveries from the same dte-status topic the boleta pipeline writes. A subscription receives,
 * over https on loopback (test CA), dte.emitted and dte.accepted for a boleta the SII accepts
 * through the boleta REST channel.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { createLogger } from '@dte/service-runtime';
import { today } from '../../services/api/test/dtes-fixtures';
import { call } from '../../services/api/test/support/test-api';
import { loadConfig } from '../../services/webhooks/src/config';
import { startWebhooksService, type RunningService } from '../../services/webhooks/src/service';
import { makeTestPki, type TestPki } from '../../services/webhooks/test/support/test-ca';
import { Receiver } from '../../services/webhooks/test/support/receiver';
import { SmtpSink } from '../../services/webhooks/test/support/smtp';
import { enrol, eventually, startPipeline, type Pipeline } from '../pipeline/harness';

interface Envelope {
  id: string;
  type: string;
  data: { dte_id: string; tipo_dte: number; folio: number; sii_status: string; categoria: string };
}

describe('boletas: webhooks from the boleta pipeline', function () {
  this.timeout(120_000);
  const saved = { NODE_ENV: process.env.NODE_ENV, LOOP: process.env.WEBHOOKS_ALLOW_LOOPBACK_RECEIVER };
  let p: Pipeline;
  let service: RunningService;
  let pki: TestPki;
  let smtp: SmtpSink;
  let rx: Receiver;

  before(async () => {
    process.env.NODE_ENV = 'test';
    process.env.WEBHOOKS_ALLOW_LOOPBACK_RECEIVER = 'true';
    pki = makeTestPki(['127.0.0.1']);
    smtp = await new SmtpSink().start();
    rx = await new Receiver(pki).start();
    p = await startPipeline({ env: { BOLETAS_ENABLED: 'true' }, tipos: [39] });
    await enrol(p.t, p.o);
    const config = loadConfig({
      NODE_ENV: 'test',
      WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'true',
      WEBHOOKS_TEST_CA_FILE: pki.caFile,
      WEBHOOKS_HEALTH_PORT: '0',
      WEBHOOKS_RETRY_DELAYS: '200ms,200ms,200ms,200ms',
      WEBHOOKS_TIMEOUT: '5s',
      WEBHOOKS_SWEEP_INTERVAL: '200ms',
      WEBHOOKS_FIRST_ATTEMPT_GRACE: '500ms',
      WEBHOOKS_RETRY_GRACE: '2s',
      WEBHOOKS_RETRY_PARTITIONS: '1',
      SMTP_URL: smtp.url,
      MASTER_KEY: p.t.config.masterKey,
      MASTER_KEY_ID: p.t.config.masterKeyId,
    });
    const logger = createLogger('boletas-webhooks');
    logger.level = 'warn';
    service = await startWebhooksService(config, logger, {
      dataSource: p.t.db.dataSource,
      messaging: p.msg.messaging,
    });
    await service.ready();
  });

  after(async () => {
    await service?.close();
    await p?.close();
    await rx?.close();
    await smtp?.close();
    for (const [k, v] of [
      ['NODE_ENV', saved.NODE_ENV],
      ['WEBHOOKS_ALLOW_LOOPBACK_RECEIVER', saved.LOOP],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });

  it('delivers dte.emitted and dte.accepted for a boleta the SII accepts', async () => {
    const created = await call(p.t.url, 'POST', '/webhooks', {
      key: p.o.key,
      json: { url: rx.url('/hooks'), events: ['dte.emitted', 'dte.accepted', 'dte.rejected'] },
      headers: { 'Idempotency-Key': 'boletas-webhooks' },
    });
    expect(created.status, created.text).to.equal(201);
    const res = await call(p.t.url, 'POST', '/boletas', {
      key: p.o.key,
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': p.o.certId },
      json: {
        tipo_dte: 39,
        rut_emisor: p.o.rut,
        fecha_emision: today(),
        items: [{ nombre: 'Té', cantidad: 3, precio_unitario: 990, exento: false, monto_item: 2970 }],
      },
    });
    expect(res.status, res.text).to.equal(202);
    const id = res.body.id as string;
    const mine = () =>
      rx.received.map((r) => JSON.parse(r.raw.toString()) as Envelope).filter((e) => e.data?.dte_id === id);
    await eventually(
      'dte.accepted for the boleta',
      async () => (mine().some((e) => e.type === 'dte.accepted') ? true : undefined),
      60_000,
    );
    const types = [...new Set(mine().map((e) => e.type))].sort();
    expect(types).to.deep.equal(['dte.accepted', 'dte.emitted']);
    const accepted = mine().find((e) => e.type === 'dte.accepted')!;
    expect(accepted.data).to.include({ tipo_dte: 39, folio: 1, sii_status: 'EPR', categoria: 'aceptado' });
  });
});
