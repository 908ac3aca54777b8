/**
 * consultarSituacionTributaria against the SII simulator's taxpayer register (real HTTP), and
 * against a server that answers 429 or garbage.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSiiSimulator, type RunningSimulator } from '@dte/sii-simulator';
import { expect } from 'chai';
import { consultarSituacionTributaria, SituacionError } from '../src';

describe('situación tributaria (simulator stand-in)', () => {
  let sim: RunningSimulator;
  before(async () => {
    sim = await startSiiSimulator({ port: 0, autoEnrol: false, cafKeyBits: 512 });
  });
  after(async () => sim?.close());

  const admin = (method: string, p: string, body?: unknown) =>
    fetch(`${sim.url}${p}`, {
      method,
      headers: { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  it('answers rut_inexistente for an unknown RUT, activo for an enrolled company, and a seeded state', async () => {
    expect((await consultarSituacionTributaria(sim.url, '76086428-5')).estado).to.equal('rut_inexistente');
    const put = await admin('PUT', '/admin/cert/companies/76086428-5', {
      razonSocial: 'DEMO SPA',
      fchResol: '2024-01-15',
      nroResol: 0,
      senders: ['11111111-1'],
    });
    expect(put.status).to.equal(200);
    expect(await consultarSituacionTributaria(sim.url, '76086428-5')).to.include({
      estado: 'activo',
      razonSocial: 'DEMO SPA',
    });
    expect(
      (await admin('PUT', '/admin/contribuyentes/76086428-5', { estado: 'sin_inicio_actividades' })).status,
    ).to.equal(200);
    expect((await consultarSituacionTributaria(sim.url, '76086428-5')).estado).to.equal(
      'sin_inicio_actividades',
    );
    expect((await admin('DELETE', '/admin/contribuyentes/76086428-5')).status).to.equal(204);
    expect((await consultarSituacionTributaria(sim.url, '76086428-5')).estado).to.equal('activo');
    expect((await admin('PUT', '/admin/contribuyentes/76086428-5', { estado: 'otro' })).status).to.equal(422);
  });

  it('throws rate_limit with the Retry-After of a 429, and unavailable for a bad RUT answer or garbage', async () => {
    let answer: (res: http.ServerResponse) => void = () => undefined;
    const server = http.createServer((_req, res) => answer(res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      answer = (res) => res.writeHead(429, { 'Retry-After': '42' }).end();
      const err = await consultarSituacionTributaria(url, '76086428-5').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(SituacionError).and.include({ kind: 'rate_limit', retryAfterSeconds: 42 });
      answer = (res) => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"estado":"raro"}');
      const bad = await consultarSituacionTributaria(url, '76086428-5').catch((e: unknown) => e);
      expect(bad).to.be.instanceOf(SituacionError).and.include({ kind: 'unavailable' });
    } finally {
      server.close();
    }
    const invalid = await consultarSituacionTributaria(sim.url, '76086428-4').catch((e: unknown) => e);
    expect(invalid).to.be.instanceOf(SituacionError).and.include({ kind: 'unavailable' });
  });
});
