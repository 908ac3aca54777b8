// No secret ever reaches a log: a full pipeline run of real processes (api with its relay and
// projector, signer, sii-uploader, sii-poller, the SII simulator) at LOG_LEVEL=debug, with a
// certificate uploaded under its .p12 password, a webhook subscription whose signing secret the api
// shows once, documents issued, a bad password refused, then every log file read as an operator
// would grep it.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { expect } from 'chai';
import { createTestP12 } from '@dte/engine';

import { emissionBody, startPipelineProcesses, type RunningPipeline } from '../support/pipeline-harness';
import { until } from '../support/until';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The JSON lines (pino) a service wrote to its log file in the harness's log folder. */
interface LogLine {
  msg?: string;
  level?: number;
  dteId?: string;
  requestId?: string;
  requestIds?: Record<string, string>;
  siiStatus?: string;
  deliveryIds?: string[];
}
function jsonLines(logDir: string, file: string): LogLine[] {
  return fs
    .readFileSync(path.join(logDir, file), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

describe('logs: a full pipeline run never logs the .p12 password, keys or webhook secrets', function () {
  this.timeout(240_000);
  let p: RunningPipeline;
  const secrets: Record<string, string> = {};
  /** document id -> the X-Request-Id the api answered its POST /dtes with */
  const requestIds = new Map<string, string>();

  before(async () => {
    p = await startPipelineProcesses({
      label: 'secrets',
      // the consumers of dte-status too: their logs must carry the request id (and no secret)
      withWebhooks: {},
      withRcvSync: true,
      // the loopback webhook receiver is a test-only setting (NODE_ENV=test)
      env: {
        NODE_ENV: 'test',
        WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'true',
        LOG_LEVEL: 'debug',
        UPLOAD_MAX_WAIT_MS: '200',
        POLL_FIRST_DELAY_MS: '200',
        POLL_TICK_MS: '100',
      },
    });
    const co = await p.seedCompany({ tipos: [33], folios: 10 });
    const auth = { Authorization: `Bearer ${co.key}` };

    // a certificate of its own under a password nobody could find by chance
    const password = `p12-${randomBytes(12).toString('hex')}`;
    const p12 = createTestP12({ rut: co.rut, password });
    const form = () => {
      const f = new FormData();
      f.append('file', new Blob([p12]), 'firma.p12');
      f.append('label', `logs-${randomUUID()}`);
      return f;
    };
    const good = form();
    good.append('password', password);
    const cert = await fetch(`${p.apiUrl}/certificates`, { method: 'POST', headers: auth, body: good });
    const certBody = (await cert.json()) as { id: string };
    expect(cert.status, JSON.stringify(certBody)).to.equal(201);
    // a wrong password: refused (and its attempt must not be logged either)
    const wrongPassword = `wrong-${randomBytes(12).toString('hex')}`;
    const bad = form();
    bad.append('password', wrongPassword);
    const refused = await fetch(`${p.apiUrl}/certificates`, { method: 'POST', headers: auth, body: bad });
    expect(refused.status).to.be.within(400, 499);

    // a webhook subscription: its signing secret is in this answer only
    const hook = await fetch(`${p.apiUrl}/webhooks`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
      body: JSON.stringify({ url: 'https://127.0.0.1:9/dte', events: ['dte.accepted'] }),
    });
    const hookBody = (await hook.json()) as { secret?: string };
    expect(hook.status, JSON.stringify(hookBody)).to.equal(201);
    expect(hookBody.secret).to.be.a('string');

    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${p.apiUrl}/dtes`, {
        method: 'POST',
        headers: {
          ...auth,
          'Content-Type': 'application/json',
          'Idempotency-Key': randomUUID(),
          'X-Cert-Id': certBody.id,
        },
        body: JSON.stringify(emissionBody(33, co.rut, 1000 + i)),
      });
      const body = (await res.json()) as { id: string };
      expect(res.status, JSON.stringify(body)).to.equal(202);
      ids.push(body.id);
      requestIds.set(body.id, res.headers.get('x-request-id')!);
    }
    const deadline = Date.now() + 120_000;
    for (;;) {
      const rows: { n: number }[] = await p.db.dataSource.query(
        `SELECT count(*)::int AS n FROM dtes WHERE id = ANY($1::uuid[]) AND sii_status IN ('EPR', 'RCH', 'RLV', 'RPR')`,
        [ids],
      );
      if (rows[0]!.n === ids.length) break;
      if (Date.now() > deadline) throw new Error('documents did not reach a verdict in 120 s');
      await sleep(250);
    }
    await sleep(500); // the last log lines reach the files

    Object.assign(secrets, {
      '.p12 password': password,
      'refused .p12 password': wrongPassword,
      'harness .p12 password': 'secreto',
      '.p12 file (base64)': p12.toString('base64').slice(0, 48),
      MASTER_KEY: p.env.MASTER_KEY!,
      SESSION_SECRET: p.env.SESSION_SECRET!,
      'API key': co.key,
      'webhook signing secret': hookBody.secret!,
    });
  });
  after(async () => p?.close());

  it('no log file holds a secret or a private key, and the run did log at debug level', () => {
    const files = fs.readdirSync(p.logDir).filter((f) => f.endsWith('.log'));
    expect(files).to.include.members([
      'api.log',
      'signer.log',
      'sii-uploader.log',
      'sii-poller.log',
      'webhooks.log',
      'rcv-sync.log',
    ]);
    let lines = 0;
    for (const f of files) {
      const text = fs.readFileSync(path.join(p.logDir, f), 'utf8');
      lines += text.split('\n').length;
      for (const [what, value] of Object.entries(secrets)) {
        expect(value.length, what).to.be.greaterThan(5);
        expect(text.includes(value), `${what} in ${f}`).to.equal(false);
      }
      expect(text, `a private key in ${f}`).to.not.match(/PRIVATE KEY/);
    }
    expect(lines, 'the services logged their work').to.be.greaterThan(20);
  });

  it('the signer logs each document with the request id of the POST /dtes that issued it (Kafka header)', () => {
    const handled = jsonLines(p.logDir, 'signer.log').filter((l) => l.msg === 'signer: command handled');
    expect(requestIds.size).to.equal(3);
    for (const [dteId, requestId] of requestIds) {
      expect(requestId, 'the api answered an X-Request-Id').to.match(/^req_/);
      expect(
        handled.filter((l) => l.dteId === dteId).map((l) => l.requestId),
        dteId,
      ).to.include(requestId);
    }
  });

  it('the uploader and the poller log each document with that same request id (carried in the outbox headers)', () => {
    const uploader = jsonLines(p.logDir, 'sii-uploader.log');
    const poller = jsonLines(p.logDir, 'sii-poller.log');
    expect(requestIds.size).to.equal(3);
    for (const [dteId, requestId] of requestIds) {
      // dte.signed, written by the signer, carries x-request-id: the uploader logs it per document
      expect(
        uploader
          .filter((l) => l.msg === 'sii-uploader: document signed' && l.dteId === dteId)
          .map((l) => l.requestId),
        `uploader, ${dteId}`,
      ).to.include(requestId);
      // the envelope's outcome names the request of each of its documents
      expect(
        uploader.filter((l) => l.msg === 'sii-uploader: upload accepted').map((l) => l.requestIds?.[dteId]),
        `uploader outcome, ${dteId}`,
      ).to.include(requestId);
      // dte.uploaded, written by the uploader, carries x-request-ids: the poller logs it, and again with its verdict
      for (const msg of ['sii-poller: envelope uploaded', 'sii-poller: status published'])
        expect(
          poller.filter((l) => l.msg === msg).map((l) => l.requestIds?.[dteId]),
          `poller "${msg}", ${dteId}`,
        ).to.include(requestId);
    }
  });

  it('every dte-status row the signer, uploader and poller wrote for a document carries its request id', async () => {
    const rows: {
      dte_id: string;
      source: string;
      sii_status: string;
      headers: Record<string, string> | null;
    }[] = await p.db.dataSource.query(
      `SELECT payload->>'dte_id' AS dte_id, payload->>'source' AS source, payload->>'sii_status' AS sii_status, headers
           FROM outbox WHERE topic = 'dte-status' AND payload->>'dte_id' = ANY($1::text[])
            AND payload->>'source' IN ('signer', 'sii-uploader', 'sii-poller')`,
      [[...requestIds.keys()]],
    );
    for (const [dteId, requestId] of requestIds) {
      const own = rows.filter((r) => r.dte_id === dteId);
      expect(
        [...new Set(own.map((r) => r.source))].sort(),
        `the workers each wrote a status of ${dteId}`,
      ).to.deep.equal(['signer', 'sii-poller', 'sii-uploader']);
      // (beside x-status-applied-from, where the worker applied the status itself)
      for (const r of own)
        expect(r.headers, `${r.source} ${r.sii_status} of ${dteId}`).to.include({
          'x-request-id': requestId,
          'x-dte-id': dteId,
        });
    }
  });

  it('the document row keeps its request id, so a restarted worker still passes it on', async () => {
    const rows: { id: string; request_id: string | null }[] = await p.db.dataSource.query(
      'SELECT id, request_id FROM dtes WHERE id = ANY($1::uuid[])',
      [[...requestIds.keys()]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.id, r.request_id]))).to.deep.equal(
      Object.fromEntries(requestIds),
    );
  });

  it('webhooks and rcv-sync log each dte-status they consume with the request id, and webhooks names the delivery it created', async () => {
    // rcv-sync gathers up to a second of statuses per fetch and statement: its verdict lines come last
    await until('rcv-sync to log the verdict of every document', async () => {
      const lines = jsonLines(p.logDir, 'rcv-sync.log');
      return [...requestIds.keys()].every((id) =>
        lines.some(
          (l) => l.msg === 'rcv-sync: dte-status consumed' && l.dteId === id && l.siiStatus === 'EPR',
        ),
      );
    });
    const webhooks = jsonLines(p.logDir, 'webhooks.log').filter(
      (l) => l.msg === 'webhooks: dte-status consumed',
    );
    const rcv = jsonLines(p.logDir, 'rcv-sync.log').filter((l) => l.msg === 'rcv-sync: dte-status consumed');
    expect(requestIds.size).to.equal(3);
    for (const [dteId, requestId] of requestIds) {
      const own = webhooks.filter((l) => l.dteId === dteId);
      // queued (api), signed (signer), sending (uploader), verdict (poller): every hop's record
      expect(
        own.map((l) => l.siiStatus),
        `webhooks, ${dteId}`,
      ).to.include.members(['queued', 'signed', 'EPR']);
      for (const l of own) expect(l.requestId, `webhooks ${l.siiStatus} of ${dteId}`).to.equal(requestId);
      // the subscription wants dte.accepted: the verdict's line names its delivery, at info level
      const accepted = own.filter((l) => l.siiStatus === 'EPR');
      expect(
        accepted.map((l) => l.deliveryIds?.length),
        `delivery of ${dteId}`,
      ).to.deep.equal([1]);
      expect(accepted[0]!.level, 'logged at info').to.equal(30);
      const rcvOwn = rcv.filter((l) => l.dteId === dteId);
      expect(
        rcvOwn.map((l) => l.siiStatus),
        `rcv-sync, ${dteId}`,
      ).to.include('EPR');
      for (const l of rcvOwn) expect(l.requestId, `rcv-sync ${l.siiStatus} of ${dteId}`).to.equal(requestId);
    }
  });
});
