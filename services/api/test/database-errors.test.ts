import { expect } from 'chai';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { DataSource } from 'typeorm';
import { migratedDatabase, testStack, type MigratedDatabase } from '../../../test/support/env';
import { call, startTestApi, type TestApi } from './support/test-api';

/** A TCP relay to PostgreSQL that the test can cut, like a database that goes away. */
async function relay(target: URL) {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.address() as AddressInfo).port,
    cut: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

describe('database failures answer 503, never internals', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;

  before(async () => {
    db = await migratedDatabase('dberr');
  });
  after(async () => db?.cleanup());

  const pgDataSource = (url: string, extra: Record<string, unknown>) =>
    new DataSource({
      type: 'postgres',
      url,
      entities: [],
      extra: { options: `-c search_path=${db.schema}`, ...extra },
    }).initialize();

  it('answers db.pool_exhausted when no connection frees up in time', async () => {
    const { databaseUrl } = await testStack();
    const tiny = await pgDataSource(databaseUrl, { max: 1, connectionTimeoutMillis: 300 });
    const t: TestApi = await startTestApi({
      db: { ...db, cleanup: async () => undefined },
      deps: { dataSource: tiny },
    });
    const holder = tiny.createQueryRunner();
    try {
      const key = (await t.seed()).api_key;
      await holder.connect();
      await holder.startTransaction();
      const res = await call(t.url, 'GET', '/certificates', { key });
      expect(res.status).to.equal(503);
      expect(res.body.code).to.equal('db.pool_exhausted');
      expect(res.text).to.not.match(/timeout exceeded|pg-pool/);
    } finally {
      await holder.rollbackTransaction().catch(() => undefined);
      await holder.release();
      await t.close();
      await tiny.destroy();
    }
  });

  it('answers db.unavailable when PostgreSQL cannot be reached', async () => {
    const { databaseUrl } = await testStack();
    const target = new URL(databaseUrl);
    const r = await relay(target);
    const viaRelay = new URL(databaseUrl);
    viaRelay.hostname = '127.0.0.1';
    viaRelay.port = String(r.port);
    const ds = await pgDataSource(viaRelay.toString(), { max: 2, connectionTimeoutMillis: 2000 });
    const t: TestApi = await startTestApi({
      db: { ...db, cleanup: async () => undefined },
      deps: { dataSource: ds },
    });
    try {
      const key = (await t.seed()).api_key;
      expect((await call(t.url, 'GET', '/certificates', { key })).status).to.equal(200);
      await r.cut();
      const res = await call(t.url, 'GET', '/certificates', { key });
      expect(res.status).to.equal(503);
      expect(res.body.code).to.equal('db.unavailable');
      expect(res.text).to.not.match(new RegExp(`ECONNREFUSED|terminated|:${r.port}`));
    } finally {
      await t.close();
      await ds.destroy().catch(() => undefined);
    }
  });
});
