/**
 * Boletas reach the webhooks like any document: the webhooks service (in this process) derives
 * deliveries from the same dte-status topic the boleta pipeline writes. A subscription receives,
 * over https on loopback (test CA), dte.emitted and dte.accepted for a boleta the SII accepts
 * through the boleta REST channel.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { today } from '../../services/api/test/dtes-fixtures';
import { call } from '../../services/api/test/support/test-api';
import { Receiver } from '../../services/webhooks/test/support/receiver';
import { enrol, eventually, startPipeline, type Pipeline } from '../pipeline/harness';
import { allowLoopbackReceivers, startTestWebhooks, type WebhooksService } from '../support/webhooks-service';

interface Envelope {
  id: string;
  type: string;
  data: { dte_id: string; tipo_dte: number; folio: number; sii_status: string; categoria: string };
}

describe('boletas: webhooks from the boleta pipeline', function () {
  this.timeout(120_000);
  let p: Pipeline;
  let webhooks: WebhooksService;
  let rx: Receiver;
  let restoreEnv: () => void;

  before(async () => {
    restoreEnv = allowLoopbackReceivers();
    p = await startPipeline({ env: { BOLETAS_ENABLED: 'true' }, tipos: [39] });
    await enrol(p.t, p.o);
    webhooks = await startTestWebhooks({
      name: 'boletas-webhooks',
      api: p.t,
      messaging: p.msg.messaging,
      env: { WEBHOOKS_TIMEOUT: '5s', WEBHOOKS_FIRST_ATTEMPT_GRACE: '500ms', WEBHOOKS_RETRY_GRACE: '2s' },
    });
    rx = await new Receiver(webhooks.pki).start();
  });

  after(async () => {
    await webhooks?.close();
    await p?.close();
    await rx?.close();
    restoreEnv?.();
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
