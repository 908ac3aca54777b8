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
import { call } from './support/test-api';
import { follow, startPipeline, type Running } from './support/pipeline';
import { body, emit } from './dtes-fixtures';

describe('emission pipeline end to end: POST /dtes to the SII verdict', function () {
  this.timeout(300_000);
  let r: Running;
  before(async () => {
    r = await startPipeline({ registerMs: 300, pollAttempts: 40 });
  });
  after(async () => r?.stop());

  it('issues every supported type (33, 34, 46, 52, 56, 61, 110, 112) and follows each to EPR by polling; the feed tells the way there', async () => {
    const issued: { id: string; tipo: number }[] = [];
    for (const tipo of [33, 34, 46, 52, 56, 61, 110, 112]) {
      const res = await emit(r.t, r.o, body(tipo, r.o.rut));
      expect(res.status, res.text).to.equal(202);
      issued.push({ id: res.body.id as string, tipo });
    }
    for (const d of issued) {
      const final = await follow(r, d.id);
      expect(final.sii_status, `${d.tipo}`).to.be.oneOf(['EPR', 'RPR']);
      expect(final.estado).to.include({ terminal: true, categoria: 'aceptado' });
      expect(final.track_id).to.be.a('number');
      const feed = (await call(r.t.url, 'GET', `/dtes/${d.id}/events`, { key: r.o.key })).body.data as {
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

  it('lists the documents the poller queried (polled_since) with their verdicts', async () => {
    const since = new Date(Date.now() - 120_000).toISOString();
    const res = await call(
      r.t.url,
      'GET',
      `/dtes?polled_since=${encodeURIComponent(since)}&sii_status=EPR&limit=100`,
      {
        key: r.o.key,
      },
    );
    expect(res.status).to.equal(200);
    const rows = res.body.data as {
      sii_status: string;
      sii_last_polled: string | null;
      track_id: number | null;
    }[];
    expect(rows.length).to.be.at.least(6);
    for (const row of rows) {
      expect(row.sii_status).to.equal('EPR');
      expect(Date.parse(row.sii_last_polled!)).to.be.at.least(Date.parse(since));
      expect(row.track_id).to.be.a('number');
    }
  });

  it('serves the signed XML, which xmllint reads as the document issued', async () => {
    const res = await emit(r.t, r.o, body(33, r.o.rut, 4321));
    const id = res.body.id as string;
    await follow(r, id);
    const raw = await fetch(`${r.t.url}/dtes/${id}/xml`, { headers: { Authorization: `Bearer ${r.o.key}` } });
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
    const res = await emit(r.t, r.o, body(33, r.o.rut, 999), { headers: { Prefer: 'wait=30' } });
    expect(res.status, res.text).to.equal(201);
    expect(res.body.track_id).to.be.a('number');
  });
});

describe('emission pipeline end to end: stuck, refresh-status, verdict', function () {
  this.timeout(300_000);
  let r: Running;
  before(async () => {
    // the SII takes 4 s to register a send; the poller gives up after 2 polls
    r = await startPipeline({ registerMs: 4000, pollAttempts: 2 });
  });
  after(async () => r?.stop());

  it('a document the poller gave up on is stuck; refresh-status re-arms the real poller, which reaches the verdict', async () => {
    const res = await emit(r.t, r.o, body(33, r.o.rut, 2222));
    expect(res.status).to.equal(202);
    const id = res.body.id as string;
    const stuck = await follow(r, id, 'stuck');
    expect(stuck.estado).to.include({ terminal: false, poll_activo: false, accion: 'reintentar_consulta' });
    expect(stuck.track_id).to.be.a('number');
    await new Promise((resolve) => setTimeout(resolve, 4000)); // the SII registers the send meanwhile
    const refresh = await call(r.t.url, 'POST', `/dtes/${id}/refresh-status`, { key: r.o.key });
    expect(refresh.status, refresh.text).to.equal(202);
    expect(refresh.body).to.deep.equal({ id, status: 'refresh_enqueued' });
    const final = await follow(r, id);
    expect(final.sii_status).to.equal('EPR');
    const feed = (await call(r.t.url, 'GET', `/dtes/${id}/events`, { key: r.o.key })).body.data as {
      sii_status: string;
    }[];
    const codes = feed.map((e) => e.sii_status);
    expect(codes.indexOf('stuck')).to.be.greaterThan(0);
    expect(codes.indexOf('stuck')).to.be.lessThan(codes.indexOf('EPR'));
  });
});
