/**
 * Fault test of the workers: the signer, sii-uploader and sii-poller run as their own processes
 * (their real main.ts) and are killed with SIGKILL at random moments while documents are being
 * issued, then restarted. Every document must reach its verdict (EPR: an uploader killed between
 * the SII's answer and its commit leaves envio_repetido only on the way, the reconciliation finds
 * the verdict), the SII must have received each folio in one upload only, no document signed
 * twice, no status twice in the feed.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { classify } from '@dte/status';
import { body, emit } from '../../services/api/test/dtes-fixtures';
import { repoRoot, testStack } from '../support/env';
import { eventually, simAdmin, startPipeline, type Pipeline } from './harness';

const WORKERS = ['signer', 'sii-uploader', 'sii-poller'] as const;
type Worker = (typeof WORKERS)[number];

describe('emission pipeline: workers killed with SIGKILL at random moments', function () {
  this.timeout(300_000);
  let p: Pipeline;
  const procs = new Map<Worker, ChildProcess>();
  const ready = new Map<Worker, Promise<boolean>>();
  let env: NodeJS.ProcessEnv;

  const startWorker = (w: Worker): Promise<void> => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, `services/${w}/src/main.ts`)],
      {
        cwd: repoRoot,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    procs.set(w, child);
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    return eventually(
      `${w} ready`,
      async () => {
        if (child.exitCode !== null) throw new Error(`${w} exited: ${out.slice(-800)}`);
        return new RegExp(`"msg":"${w} ready"`).test(out) ? true : undefined;
      },
      60_000,
    ).then(() => undefined);
  };
  const kill = async (w: Worker) => {
    const c = procs.get(w);
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };

  before(async () => {
    p = await startPipeline();
    // the in-process workers of the harness give way to real processes
    await Promise.all([p.signer.stop(), p.uploader.stop(), p.poller.stop()]);
    const stack = await testStack();
    env = {
      ...process.env,
      NODE_ENV: 'test',
      DATABASE_URL: stack.databaseUrl,
      DATABASE_SCHEMA: p.t.db.schema,
      REDIS_URL: stack.redisUrl,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      SCHEMA_REGISTRY_URL: stack.schemaRegistryUrl,
      KAFKA_TOPIC_PREFIX: p.msg.prefix,
      PIPELINE_PARTITIONS: '2',
      MASTER_KEY: p.t.config.masterKey,
      MASTER_KEY_ID: p.t.config.masterKeyId,
      SII_BASE_URL: p.t.sim.url,
      SII_TOKEN_CACHE_PREFIX: `t:${randomBytes(6).toString('hex')}:sii:token`,
      SIGNER_HEALTH_PORT: '0',
      SII_UPLOADER_HEALTH_PORT: '0',
      SII_POLLER_HEALTH_PORT: '0',
      UPLOAD_MAX_DOCS: '5',
      UPLOAD_MAX_WAIT_MS: '300',
      UPLOAD_LEASE_MS: '3000',
      UPLOAD_SWEEP_MS: '200',
      UPLOAD_RETRY_DELAY_MS: '200',
      POLL_FIRST_DELAY_MS: '200',
      POLL_BACKOFF_BASE_MS: '200',
      POLL_BACKOFF_FACTOR: '1.5',
      POLL_BACKOFF_MAX_MS: '600',
      POLL_MAX_ATTEMPTS: '40',
      POLL_TICK_MS: '100',
      POLL_LEASE_MS: '3000',
      LOG_LEVEL: 'info',
    };
    await Promise.all(WORKERS.map(startWorker));
  });

  after(async () => {
    for (const w of WORKERS) await kill(w);
    await p?.close();
  });

  it('every document reaches a final state, each folio reaches the SII once, nothing is signed or reported twice', async () => {
    const N = 20;
    const ids: string[] = [];
    const kills: Record<Worker, number> = { signer: 0, 'sii-uploader': 0, 'sii-poller': 0 };
    let issuing = true;
    const chaos = (async () => {
      while (issuing) {
        await new Promise((r) => setTimeout(r, 500 + Math.random() * 1200));
        const w = WORKERS[Math.floor(Math.random() * WORKERS.length)];
        await kill(w); // possibly while it is still starting: a fault like any other
        kills[w] += 1;
        ready.set(
          w,
          startWorker(w).then(
            () => true,
            () => false,
          ),
        ); // restarted at once, not awaited
      }
    })();
    for (let i = 0; i < N; i++) {
      const res = await emit(p.t, p.o, body(i % 3 === 0 ? 34 : 33, p.o.rut, 1000 + i));
      expect(res.status, res.text).to.equal(202);
      ids.push(res.body.id as string);
      await new Promise((r) => setTimeout(r, 200));
    }
    // keep killing a while after the last emission, then let everything settle
    await new Promise((r) => setTimeout(r, 5000));
    issuing = false;
    await chaos;
    for (const w of WORKERS) if (!(await (ready.get(w) ?? true))) await startWorker(w);

    // envio_repetido is not final any more: the poller reconciles those documents to the verdict
    const FINAL = (s: string) =>
      classify(s).terminal || (classify(s).categoria === 'requiere_accion' && s !== 'envio_repetido');
    const rows = await eventually(
      'every document in a final state',
      async () => {
        const r: { id: string; sii_status: string; tipo_dte: number; folio: string }[] =
          await p.t.db.dataSource.query(
            'SELECT id, sii_status, tipo_dte, folio FROM dtes WHERE id = ANY($1::uuid[])',
            [ids],
          );
        return r.length === N && r.every((x) => FINAL(x.sii_status)) ? r : undefined;
      },
      120_000,
    );
    const outcome: Record<string, number> = {};
    for (const r of rows) outcome[r.sii_status] = (outcome[r.sii_status] ?? 0) + 1;
    console.log(`      kills ${JSON.stringify(kills)}; outcomes ${JSON.stringify(outcome)}`);

    // every document at its verdict, whatever instant the uploader was killed at
    expect(outcome.EPR ?? 0, JSON.stringify(outcome)).to.equal(N);

    // the SII received each folio in one upload only
    const uploads = await simAdmin<{ documents: { tipoDte: number; folio: number }[] }[]>(
      p.t,
      'GET',
      '/admin/cert/uploads',
    );
    const atSii = uploads.flatMap((u) => u.documents.map((d) => `${d.tipoDte}:${d.folio}`));
    expect(new Set(atSii).size).to.equal(atSii.length);
    for (const r of rows) expect(atSii).to.include(`${r.tipo_dte}:${r.folio}`);

    // signed once; each status once per document in the feed
    const signed: { n: number }[] = await p.t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM outbox WHERE topic = 'dte.signed' AND payload->>'dte_id' = ANY($1::text[])
        GROUP BY payload->>'dte_id'`,
      [ids],
    );
    expect(signed.length).to.equal(N);
    expect(signed.every((s) => s.n === 1)).to.equal(true);
    const dup: unknown[] = await p.t.db.dataSource.query(
      `SELECT dte_id, sii_status FROM dte_events WHERE dte_id = ANY($1::uuid[])
        GROUP BY dte_id, sii_status HAVING count(*) > 1`,
      [ids],
    );
    expect(dup).to.deep.equal([]);
  });
});
