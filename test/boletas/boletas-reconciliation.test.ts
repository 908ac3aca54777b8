import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { RedisTokenCache, SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { Uploader } from '@dte/sii-uploader';
import { today } from '../../services/api/test/dtes-fixtures';
import { call } from '../../services/api/test/support/test-api';
import { enrol, eventually, startPipeline, uploaderSettings, type Pipeline } from '../pipeline/harness';

/**
 * A boleta whose REST envío reached the SII but whose answer never came back (the connection cut
 * after the request, on every attempt): the upload ends unconfirmed (never emision_fallida, never a
 * second envelope), and the poller reconciles the boleta with the boleta REST per-document status.
 */
async function cuttingProxy(
  target: string,
): Promise<{ url: string; envios: number; close(): Promise<void> }> {
  const base = new URL(target);
  const proxy = { url: '', envios: 0, close: async () => undefined as void };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const up = http.request(
        {
          host: base.hostname,
          port: base.port,
          path: req.url,
          method: req.method,
          headers: { ...req.headers, host: base.host },
        },
        (answer) => {
          const out: Buffer[] = [];
          answer.on('data', (c: Buffer) => out.push(c));
          answer.on('end', () => {
            if (req.method === 'POST' && (req.url ?? '').endsWith('/boleta.electronica.envio')) {
              proxy.envios++;
              req.socket.destroy();
              return;
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            res.end(Buffer.concat(out));
          });
        },
      );
      up.on('error', () => req.socket.destroy());
      up.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return proxy;
}

describe('boletas: reconciling a REST envío whose answer was lost', function () {
  this.timeout(240_000);
  let p: Pipeline;
  before(async () => {
    p = await startPipeline({ env: { BOLETAS_ENABLED: 'true' }, tipos: [39] });
    await enrol(p.t, p.o);
  });
  after(() => p?.close());

  it('ends the upload unconfirmed after its attempts and brings the boleta to EPR through the per-boleta REST status', async () => {
    const proxy = await cuttingProxy(p.t.sim.url);
    await p.uploader.stop();
    const sii = new SiiClient({
      endpoints: simulatorEndpoints(proxy.url),
      timeoutMs: 5000,
      uploadTimeoutMs: 5000,
      tokenCache: new RedisTokenCache(p.redis),
      tokenCacheKeyPrefix: `t:${randomBytes(6).toString('hex')}:sii:token`,
    });
    p.uploader = new Uploader({
      dataSource: p.t.db.dataSource,
      keys: p.t.deps.keys,
      sii,
      logger: p.logger,
      settings: uploaderSettings,
    });
    await p.uploader.start();
    try {
      const res = await call(p.t.url, 'POST', '/boletas', {
        key: p.o.key,
        headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': p.o.certId },
        json: {
          tipo_dte: 39,
          rut_emisor: p.o.rut,
          fecha_emision: today(),
          items: [{ nombre: 'Pan', cantidad: 1, precio_unitario: 2380, exento: false, monto_item: 2380 }],
        },
      });
      expect(res.status, res.text).to.equal(202);
      const id = res.body.id as string;
      const r = await eventually('reconciled', async () => {
        const x = (
          await p.t.db.dataSource.query('SELECT sii_status, track_id FROM dtes WHERE id = $1', [id])
        )[0];
        return ['EPR', 'RCH', 'stuck', 'emision_fallida'].includes(x.sii_status) ? x : undefined;
      });
      expect(r.sii_status).to.equal('EPR');
      expect(r.track_id).to.equal(null);
      expect(proxy.envios).to.equal(uploaderSettings.maxAttempts);
      const ups = await p.t.db.dataSource.query(
        `SELECT state, channel, maybe_registered FROM sii_uploads WHERE $1 = ANY(dte_ids)`,
        [id],
      );
      expect(ups).to.deep.equal([{ state: 'unconfirmed', channel: 'boleta', maybe_registered: true }]);
      const feed = (
        await p.t.db.dataSource.query(
          'SELECT sii_status FROM dte_events WHERE dte_id = $1 ORDER BY observed_at, id',
          [id],
        )
      ).map((e: { sii_status: string }) => e.sii_status);
      expect(feed).to.deep.equal(['queued', 'signed', 'EPR']);
      // the SII holds it once (every attempt carried the same bytes: the repeats were refused)
      const sim = (await fetch(`${p.t.sim.url}/admin/cert/uploads`).then((x) => x.json())) as {
        documents: { tipoDte: number; folio: number }[];
      }[];
      expect(sim.filter((u) => u.documents.some((d) => d.tipoDte === 39 && d.folio === 1))).to.have.length(1);
    } finally {
      await p.uploader.stop();
      await proxy.close();
    }
  });
});
