// GET /metrics on every service of a running pipeline (real processes, the shared PostgreSQL,
// Kafka and registry, the SII simulator), read the way Prometheus reads it: the Prometheus text
// format, after documents went through the whole pipeline and one emission was refused.
import { randomUUID } from 'node:crypto';

import { expect } from 'chai';

import {
  emissionBody,
  freePort,
  startPipelineProcesses,
  type RunningPipeline,
  type SeededCompany,
} from '../support/pipeline-harness';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (samples only; comments are checked apart). */
function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    expect(m, `a sample line: ${line}`).to.not.equal(null);
    const labels: Record<string, string> = {};
    for (const l of m![2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? [])
      labels[l[1]!] = l[2]!;
    out.push({ name: m![1]!, labels, value: Number(m![3]) });
  }
  return out;
}

function find(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = find(samples, name, labels);
  expect(found, `${name}${JSON.stringify(labels)}`).to.have.length.greaterThan(0);
  return found.reduce((a, s) => a + s.value, 0);
}

async function scrape(url: string): Promise<{ text: string; samples: Sample[] }> {
  const res = await fetch(url);
  expect(res.status, url).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, samples: parseProm(text) };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('metrics: GET /metrics on every service of a running pipeline', function () {
  this.timeout(240_000);
  let p: RunningPipeline;
  let co: SeededCompany;
  const ports = { signer: 0, 'sii-uploader': 0, 'sii-poller': 0 };
  const ids: string[] = [];
  let apiOrigin: string;

  before(async () => {
    ports.signer = await freePort();
    ports['sii-uploader'] = await freePort();
    ports['sii-poller'] = await freePort();
    p = await startPipelineProcesses({
      label: 'metrics',
      env: {
        SIGNER_HEALTH_PORT: String(ports.signer),
        SII_UPLOADER_HEALTH_PORT: String(ports['sii-uploader']),
        SII_POLLER_HEALTH_PORT: String(ports['sii-poller']),
        UPLOAD_MAX_WAIT_MS: '200',
        POLL_FIRST_DELAY_MS: '200',
        POLL_BACKOFF_BASE_MS: '200',
        POLL_BACKOFF_MAX_MS: '400',
        POLL_TICK_MS: '100',
      },
    });
    apiOrigin = new URL(p.apiUrl).origin;
    co = await p.seedCompany({ tipos: [33], folios: 10 });
    const post = (body: unknown) =>
      fetch(`${p.apiUrl}/dtes`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${co.key}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': randomUUID(),
          'X-Cert-Id': co.certId,
        },
        body: JSON.stringify(body),
      });
    for (let i = 0; i < 3; i++) {
      const res = await post(emissionBody(33, co.rut, 1000 + i));
      const body = (await res.json()) as { id: string };
      expect(res.status, JSON.stringify(body)).to.equal(202);
      ids.push(body.id);
    }
    // refused emissions: a 34 for which the company has no CAF; one without items
    const refused = await post(emissionBody(34, co.rut, 1));
    expect(((await refused.json()) as { code: string }).code).to.equal('caf_not_found');
    const invalid = await post({ ...emissionBody(33, co.rut, 1), items: [] });
    expect(((await invalid.json()) as { code: string }).code).to.equal('items_empty');
    // one read by id, so the route pattern (not the id) labels it
    const read = await fetch(`${p.apiUrl}/dtes/${ids[0]}`, {
      headers: { Authorization: `Bearer ${co.key}` },
    });
    expect(read.status).to.equal(200);
    // until every document has its verdict
    const deadline = Date.now() + 120_000;
    for (;;) {
      const rows: { n: number }[] = await p.db.dataSource.query(
        `SELECT count(*)::int AS n FROM dtes WHERE id = ANY($1::uuid[]) AND sii_status IN ('EPR', 'RCH', 'RLV', 'RPR')`,
        [ids],
      );
      if (rows[0]!.n === ids.length) break;
      if (Date.now() > deadline) throw new Error('documents did not reach a verdict in 120 s');
      await sleep(200);
    }
  });
  after(async () => p?.close());

  it('the api: HTTP latency by route pattern and status, emissions by type and outcome, stages, outbox', async () => {
    // the projector sees the verdict's record (and the relay marks it published) a moment after
    // the row shows it: retry briefly
    let samples: Sample[] = [];
    let text = '';
    for (let i = 0; i < 20; i++) {
      ({ text, samples } = await scrape(`${apiOrigin}/metrics`));
      if (
        find(samples, 'dte_stage_duration_seconds_count', { to: 'verdict' }).length > 0 &&
        value(samples, 'dte_outbox_depth') === 0
      )
        break;
      await sleep(250);
    }
    expect(text).to.include('# TYPE dte_http_request_duration_seconds histogram');
    expect(
      value(samples, 'dte_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/api/v1/dtes',
        status: '202',
      }),
    ).to.equal(3);
    expect(
      value(samples, 'dte_http_request_duration_seconds_count', {
        method: 'GET',
        route: '/api/v1/dtes/:id',
        status: '200',
      }),
    ).to.equal(1);
    // no raw path (no document id) ever becomes a label value
    for (const id of ids) expect(text).to.not.include(id);
    expect(value(samples, 'dte_emissions_total', { tipo_dte: '33', outcome: 'issued' })).to.equal(3);
    expect(value(samples, 'dte_emissions_total', { tipo_dte: '34', outcome: 'caf_not_found' })).to.equal(1);
    expect(value(samples, 'dte_emissions_total', { outcome: 'items_empty' })).to.equal(1);
    // every document went queued -> signed -> sending -> at the SII -> verdict
    expect(value(samples, 'dte_stage_duration_seconds_count', { from: 'queued', to: 'signed' })).to.equal(3);
    expect(value(samples, 'dte_stage_duration_seconds_count', { to: 'verdict' })).to.equal(3);
    expect(value(samples, 'dte_verdicts_total')).to.equal(3);
    // the relay published everything
    expect(value(samples, 'dte_outbox_depth')).to.equal(0);
    expect(value(samples, 'dte_outbox_oldest_age_seconds')).to.equal(0);
    // the projector's consumer group, caught up
    expect(value(samples, 'dte_kafka_consumer_lag', { group: `${p.prefix}api.projector` })).to.equal(0);
    expect(value(samples, 'process_resident_memory_bytes')).to.be.greaterThan(0);
  });

  it('the workers on their health port: consumer lag per group, SII call latency by operation', async () => {
    const signer = (await scrape(`http://127.0.0.1:${ports.signer}/metrics`)).samples;
    const lag = find(signer, 'dte_kafka_consumer_lag', { group: `${p.prefix}signer` });
    expect(lag, 'the signer reports its group').to.have.length.greaterThan(0);
    expect(lag.reduce((a, s) => a + s.value, 0)).to.equal(0);

    const uploader = (await scrape(`http://127.0.0.1:${ports['sii-uploader']}/metrics`)).samples;
    expect(
      value(uploader, 'dte_sii_request_duration_seconds_count', { operation: 'DTEUpload', outcome: 'ok' }),
    ).to.be.at.least(1);
    expect(
      find(uploader, 'dte_kafka_consumer_lag', { group: `${p.prefix}sii-uploader` }),
    ).to.have.length.greaterThan(0);

    const poller = (await scrape(`http://127.0.0.1:${ports['sii-poller']}/metrics`)).samples;
    const polls = find(poller, 'dte_sii_request_duration_seconds_count', { outcome: 'ok' });
    expect(
      polls.map((s) => s.labels.operation),
      'the poller asked the SII',
    ).to.not.deep.equal([]);
  });

  it('counts SII errors by operation and kind when the SII fails, and times the failed exchange', async () => {
    const url = `http://127.0.0.1:${ports['sii-uploader']}/metrics`;
    const errors = (samples: Sample[]) =>
      find(samples, 'dte_sii_errors_total', { operation: 'DTEUpload', kind: 'transient' }).reduce(
        (a, s) => a + s.value,
        0,
      );
    const failedUploads = (samples: Sample[]) =>
      find(samples, 'dte_sii_request_duration_seconds_count', {
        operation: 'DTEUpload',
        outcome: 'http_5xx',
      }).reduce((a, s) => a + s.value, 0);
    const before = (await scrape(url)).samples;
    // the next upload gets HTTP 500 from the SII: the uploader retries it later
    await p.simAdmin('POST', '/admin/triggers', { kind: 'http-error', operation: 'upload', status: 500 });
    const res = await fetch(`${p.apiUrl}/dtes`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${co.key}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
        'X-Cert-Id': co.certId,
      },
      body: JSON.stringify(emissionBody(33, co.rut, 5000)),
    });
    expect(res.status).to.equal(202);
    const deadline = Date.now() + 60_000;
    let after = before;
    while (failedUploads(after) === failedUploads(before) && Date.now() < deadline) {
      await sleep(300);
      after = (await scrape(url)).samples;
    }
    expect(failedUploads(after) - failedUploads(before), 'the failed upload was timed').to.equal(1);
    expect(errors(after) - errors(before), 'and counted as a transient DTEUpload error').to.be.at.least(1);
  });
});
