import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RedisTokenCache, SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { Uploader } from '@dte/sii-uploader';
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

/**
 * Reconciliation of envelopes the SII may hold while we have no track id: an unreadable answer,
 * a connection cut after the request was sent, an envelope dropped before the SII processed it,
 * and an SII that answers "repeated" for an envelope it never registered.
 */

type Mode = 'pass' | 'garble' | 'cut';

interface Proxy {
  url: string;
  /** DTEUpload requests forwarded to the SII */
  uploads: number;
  close(): Promise<void>;
}

/**
 * A loopback proxy in front of the simulator. Every request reaches the SII; the answer to the
 * n-th DTEUpload is then handled by plan[n]: `garble` replaces it with a RECEPCIONDTE without
 * TRACKID (unreadable), `cut` closes the connection without an answer, `pass` (or none) relays it.
 */
async function startProxy(target: string, plan: Mode[]): Promise<Proxy> {
  const base = new URL(target);
  const proxy: Proxy = { url: '', uploads: 0, close: async () => undefined };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = { ...req.headers, host: base.host };
      const up = http.request(
        { host: base.hostname, port: base.port, path: req.url, method: req.method, headers },
        (answer) => {
          const out: Buffer[] = [];
          answer.on('data', (c: Buffer) => out.push(c));
          answer.on('end', () => {
            const isUpload = (req.url ?? '').includes('/cgi_dte/UPL/DTEUpload');
            const mode: Mode = isUpload ? (plan[proxy.uploads++] ?? 'pass') : 'pass';
            if (mode === 'cut') {
              req.socket.destroy();
              return;
            }
            if (mode === 'garble') {
              res.writeHead(200, { 'Content-Type': 'text/xml' });
              res.end(
                '<?xml version="1.0" encoding="UTF-8"?>\n<RECEPCIONDTE><STATUS>0</STATUS></RECEPCIONDTE>',
              );
              return;
            }
            res.writeHead(answer.statusCode ?? 502, {
              'Content-Type': answer.headers['content-type'] ?? 'text/plain',
            });
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

interface SimUpload {
  trackId: string;
  documents: { tipoDte: number; folio: number; result: string }[];
}

describe('emission pipeline: reconciling envelopes the SII may hold without a track id', function () {
  this.timeout(240_000);
  let p: Pipeline;

  before(async () => {
    p = await startPipeline();
  });
  after(async () => p?.close());

  const db = () => p.t.db.dataSource;
  const row = async (id: string) =>
    (
      await db().query(
        'SELECT id, sii_status, sii_glosa, track_id, upload_id, folio FROM dtes WHERE id = $1',
        [id],
      )
    )[0] as {
      sii_status: string;
      sii_glosa: string | null;
      track_id: string | null;
      upload_id: string;
      folio: string;
    };
  const feed = async (id: string): Promise<string[]> =>
    (
      await db().query('SELECT sii_status FROM dte_events WHERE dte_id = $1 ORDER BY observed_at, id', [id])
    ).map((r: { sii_status: string }) => r.sii_status);
  const until = (id: string, statuses: string[]) =>
    eventually(`${id} in ${statuses.join('/')}`, async () => {
      const r = await row(id);
      return statuses.includes(r.sii_status) ? r : undefined;
    });
  const issue = async (): Promise<string> => {
    const res = await emit(p.t, p.o, body(33, p.o.rut));
    expect(res.status, res.text).to.equal(202);
    return res.body.id as string;
  };
  const atSii = async (folio: string) =>
    (await simAdmin<SimUpload[]>(p.t, 'GET', '/admin/cert/uploads')).filter((u) =>
      u.documents.some((d) => d.tipoDte === 33 && d.folio === Number(folio)),
    );
  const uploadsOf = async (id: string) =>
    (await db().query(
      'SELECT state, attempts, maybe_registered, track_id FROM sii_uploads WHERE $1 = ANY(dte_ids)',
      [id],
    )) as { state: string; attempts: number; maybe_registered: boolean; track_id: string | null }[];

  /** Runs the uploader through a proxy with that plan for the DTEUpload answers. */
  async function throughProxy<T>(plan: Mode[], work: (proxy: Proxy) => Promise<T>): Promise<T> {
    const proxy = await startProxy(p.t.sim.url, plan);
    await p.uploader.stop();
    const sii = new SiiClient({
      endpoints: simulatorEndpoints(proxy.url),
      timeoutMs: 5000,
      uploadTimeoutMs: 10000,
      tokenCache: new RedisTokenCache(p.redis),
      tokenCacheKeyPrefix: `t:${randomBytes(6).toString('hex')}:sii:token`,
    });
    p.uploader = new Uploader({
      dataSource: db(),
      keys: p.t.deps.keys,
      sii,
      logger: p.logger,
      settings: uploaderSettings,
    });
    await p.uploader.start();
    try {
      return await work(proxy);
    } finally {
      await p.uploader.stop();
      await proxy.close();
      p.uploader = new Uploader({
        dataSource: db(),
        keys: p.t.deps.keys,
        sii: p.sii,
        logger: p.logger,
        settings: uploaderSettings,
      });
      await p.uploader.start();
    }
  }

  it('an unreadable answer after the SII registered the envelope: the same bytes go again, the repeat is reconciled to EPR', async () => {
    await throughProxy(['garble'], async (proxy) => {
      const res = await emit(p.t, p.o, body(33, p.o.rut));
      expect(res.status, res.text).to.equal(202);
      const id = res.body.id as string;
      const requestId = res.headers.get('x-request-id');
      expect(requestId, 'the api answered an X-Request-Id').to.match(/^req_/);
      const r = await until(id, ['EPR', 'RCH', 'stuck', 'emision_fallida']);
      expect(r.sii_status).to.equal('EPR');
      // no envelope with a track id ever reached the poller: the reconciled status carries the
      // request id stored with the document (dtes.request_id), as the later hops' logs need
      const reconciled: { headers: Record<string, string> | null }[] = await db().query(
        `SELECT headers FROM outbox WHERE topic = 'dte-status' AND payload->>'dte_id' = $1
            AND payload->>'source' = 'sii-poller' AND payload->>'sii_status' = 'EPR'`,
        [id],
      );
      expect(reconciled.map((x) => x.headers)).to.deep.equal([{ 'x-request-id': requestId, 'x-dte-id': id }]);
      expect(r.track_id).to.equal(null);
      expect(proxy.uploads).to.equal(2);
      expect(await uploadsOf(id)).to.deep.equal([
        { state: 'repeated', attempts: 2, maybe_registered: true, track_id: null },
      ]);
      expect(await feed(id)).to.deep.equal(['queued', 'signed', 'envio_repetido', 'EPR']);
      expect(await atSii(r.folio)).to.have.length(1);
    });
  });

  it('the connection cut after sending, on every attempt: the attempts run out unconfirmed (never emision_fallida) and QueryEstDte brings EPR', async () => {
    await throughProxy(Array(uploaderSettings.maxAttempts).fill('cut'), async (proxy) => {
      const id = await issue();
      const r = await until(id, ['EPR', 'RCH', 'stuck', 'emision_fallida']);
      expect(r.sii_status).to.equal('EPR');
      expect(proxy.uploads).to.equal(uploaderSettings.maxAttempts);
      expect(await uploadsOf(id)).to.deep.equal([
        {
          state: 'unconfirmed',
          attempts: uploaderSettings.maxAttempts,
          maybe_registered: true,
          track_id: null,
        },
      ]);
      // nothing published while unconfirmed: from signed straight to the SII's verdict
      expect(await feed(id)).to.deep.equal(['queued', 'signed', 'EPR']);
      const sim = await atSii(r.folio);
      expect(sim).to.have.length(1);
      expect(sim[0].documents[0].result).to.equal('ACEPTADO');
    });
  });

  it('an envelope dropped before the SII processed it is sent again with the same bytes: uploaded once, EPR with its track id', async () => {
    await simAdmin(p.t, 'POST', '/admin/triggers', { kind: 'drop', operation: 'upload', env: 'cert' });
    const id = await issue();
    const r = await until(id, ['EPR', 'RCH', 'stuck', 'emision_fallida']);
    expect(r.sii_status).to.equal('EPR');
    const sim = await atSii(r.folio);
    expect(sim).to.have.length(1);
    expect(r.track_id).to.equal(sim[0].trackId);
    const ups = await uploadsOf(id);
    expect(ups).to.have.length(1);
    expect(ups[0]).to.deep.include({ state: 'accepted', attempts: 2, track_id: r.track_id });
  });

  it('an SII that answers "repeated" for an envelope it never registered: the document is never uploaded again and ends stuck after the budget; refresh-status re-arms the check', async () => {
    // the first send is dropped unprocessed, the re-send is answered STATUS 99 without registering
    await simAdmin(p.t, 'POST', '/admin/triggers', [
      { kind: 'drop', operation: 'upload', env: 'cert' },
      { kind: 'repeated', env: 'cert' },
    ]);
    const id = await issue();
    const r = await until(id, ['stuck', 'EPR', 'RCH', 'emision_fallida']);
    expect(r.sii_status).to.equal('stuck');
    expect(r.sii_glosa).to.match(/no se reenvía/);
    expect(await feed(id)).to.deep.equal(['queued', 'signed', 'envio_repetido', 'stuck']);
    const check: { state: string; attempts: number; last_estado: string }[] = await db().query(
      'SELECT state, attempts, last_estado FROM sii_doc_checks WHERE dte_id = $1',
      [id],
    );
    expect(check[0]).to.deep.equal({
      state: 'stuck',
      attempts: pollerSettings.maxAttempts,
      last_estado: 'FAU',
    });
    expect(await uploadsOf(id)).to.deep.equal([
      { state: 'repeated', attempts: 2, maybe_registered: true, track_id: null },
    ]);
    expect(await atSii(r.folio)).to.have.length(0);
    const firstStuck = new Date(
      ((await db().query('SELECT observed_at FROM dtes WHERE id = $1', [id])) as { observed_at: Date }[])[0]
        .observed_at,
    );

    // refresh-status works without a track id: the check runs again from a fresh budget
    const refresh = await call(p.t.url, 'POST', `/dtes/${id}/refresh-status`, { key: p.o.key });
    expect(refresh.status, refresh.text).to.equal(202);
    expect(refresh.body).to.deep.equal({ id, status: 'refresh_enqueued' });
    const armed: { state: string }[] = await db().query(
      'SELECT state FROM sii_doc_checks WHERE dte_id = $1',
      [id],
    );
    expect(armed[0].state).to.equal('active');
    // stuck again, observed later (the feed keeps one entry for consecutive equal statuses)
    await eventually('stuck again', async () => {
      const [c]: { state: string; observed_at: Date }[] = await db().query(
        `SELECT k.state, d.observed_at FROM sii_doc_checks k JOIN dtes d ON d.id = k.dte_id WHERE k.dte_id = $1`,
        [id],
      );
      return c.state === 'stuck' && new Date(c.observed_at) > firstStuck ? c : undefined;
    });
    expect((await row(id)).sii_status).to.equal('stuck');
    expect(await uploadsOf(id)).to.have.length(1);
    expect(await atSii(r.folio)).to.have.length(0);
  });
});
