// Exports priced at the Banco Central de Chile's published rate: the api configured with
// EXCHANGE_RATE_URL at a local stand-in of the BDE API's GetSeries endpoint, answering in the
// real response format (Codigo/Descripcion/Series.Obs with dd-mm-yyyy dates, "NaN"/"ND" on days
// without a value), and the api's own config reader for the settings.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { expect } from 'chai';

import { loadConfig } from '../src/config';
import { lastObservationOnOrBefore } from '@dte/emission';
import { body, emit, nextFolio, orgWithCafs, today, type DteOrg } from './dtes-fixtures';
import { startTestApi, type TestApi } from './support/test-api';

const USER = 'integracion@empresa.cl';
const PASSWORD = 'bde-Secret-1';

/** dd-mm-yyyy of `iso` shifted by `days` */
function bcchDate(iso: string, days: number): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  const [y, m, dd] = d.toISOString().slice(0, 10).split('-');
  return `${dd}-${m}-${y}`;
}

/** A stand-in of https://si3.bcentral.cl/SieteRestWS/SieteRestWS.ashx serving fixed series. */
async function startBdeStandIn(series: Record<string, { date: string; value: string; status: string }[]>) {
  const requests: URLSearchParams[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const send = (body: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    if (u.pathname !== '/SieteRestWS/SieteRestWS.ashx') return res.writeHead(404).end();
    requests.push(u.searchParams);
    const q = u.searchParams;
    if (q.get('user') !== USER || q.get('pass') !== PASSWORD)
      return send({ Codigo: -5, Descripcion: 'Invalid username or password', Series: { Obs: null } });
    const obs = series[q.get('timeseries') ?? ''];
    if (!obs) return send({ Codigo: -50, Descripcion: 'Serie no encontrada', Series: { Obs: null } });
    send({
      Codigo: 0,
      Descripcion: 'Success',
      Series: {
        descripEsp: 'Tipo de cambio nominal (dólar observado $CLP/USD)',
        descripIng: 'Nominal exchange rate (observed dollar CLP/USD)',
        seriesId: q.get('timeseries'),
        Obs: obs.map((o) => ({ indexDateString: o.date, value: o.value, statusCode: o.status })),
      },
      SeriesInfos: [],
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/SieteRestWS/SieteRestWS.ashx`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('POST /dtes exports priced at the Banco Central de Chile (BDE API GetSeries)', function () {
  this.timeout(180_000);
  let bde: Awaited<ReturnType<typeof startBdeStandIn>>;
  let t: TestApi;
  let o: DteOrg;
  const day = today();

  before(async () => {
    bde = await startBdeStandIn({
      // the dólar observado: a value yesterday, none today (published later / holiday)
      'F073.TCO.PRE.Z.D': [
        { date: bcchDate(day, -2), value: '940.12', status: 'OK' },
        { date: bcchDate(day, -1), value: '943.58', status: 'OK' },
        { date: bcchDate(day, 0), value: 'NaN', status: 'ND' },
      ],
    });
    t = await startTestApi({
      env: { EXCHANGE_RATE_URL: bde.url, EXCHANGE_RATE_USER: USER, EXCHANGE_RATE_PASSWORD: PASSWORD },
    });
    o = await orgWithCafs(t, { tipos: [110] });
  });
  after(async () => {
    await t?.close();
    await bde?.close();
  });

  const noRate = () => {
    const { otra_moneda: _o, ...rest } = body(110, o.rut);
    void _o;
    return rest;
  };

  it('prices a USD export at the last dólar observado on or before its date, asking for that window', async () => {
    const before = await nextFolio(t, o, 110);
    const res = await emit(t, o, noRate());
    expect(res.status, res.text).to.equal(202);
    // 20.5 USD at 943.58 CLP = 19343.39 -> 19343 CLP
    expect(res.body).to.include({ folio: before, monto_exento: 19343, monto_total: 19343 });
    const q = bde.requests.at(-1)!;
    expect(Object.fromEntries(q)).to.deep.equal({
      user: USER,
      pass: PASSWORD,
      function: 'GetSeries',
      timeseries: 'F073.TCO.PRE.Z.D',
      firstdate: `${bcchDate(day, -14).split('-').reverse().join('-')}`,
      lastdate: day,
    });
  });

  it('answers dte.tipo_cambio_unavailable, no folio used, for a currency without a configured series', async () => {
    const before = await nextFolio(t, o, 110);
    const res = await emit(t, o, { ...noRate(), tpo_moneda: 'LIBRA EST' });
    expect(res.status).to.equal(503);
    expect(res.body.code).to.equal('dte.tipo_cambio_unavailable');
    expect(res.body.message).to.include('GBP').and.include('EXCHANGE_RATE_SERIES');
    expect(await nextFolio(t, o, 110)).to.equal(before);
  });

  it('reads the settings: the BDE endpoint needs its credentials; EXCHANGE_RATE_SERIES adds series', () => {
    const base = { MASTER_KEY: Buffer.alloc(32, 1).toString('base64'), SESSION_SECRET: 'x'.repeat(32) };
    expect(() => loadConfig({ ...base, EXCHANGE_RATE_URL: bde.url })).to.throw(
      /EXCHANGE_RATE_USER and EXCHANGE_RATE_PASSWORD are required/,
    );
    const c = loadConfig({
      ...base,
      EXCHANGE_RATE_URL: bde.url,
      EXCHANGE_RATE_USER: USER,
      EXCHANGE_RATE_PASSWORD: PASSWORD,
      EXCHANGE_RATE_SERIES: '{"GBP":"F072.CLP.GBP.N.O.D"}',
    });
    expect(c.exchangeRateSeries).to.deep.equal({ GBP: 'F072.CLP.GBP.N.O.D' });
    expect(() => loadConfig({ ...base, EXCHANGE_RATE_SERIES: '["USD"]' })).to.throw(/EXCHANGE_RATE_SERIES/);
  });

  it('takes the last published value, skipping ND days and anything after the date', () => {
    const answer = {
      Codigo: 0,
      Descripcion: 'Success',
      Series: {
        seriesId: 'F073.TCO.PRE.Z.D',
        Obs: [
          { indexDateString: '20-11-2026', value: '941.10', statusCode: 'OK' },
          { indexDateString: '21-11-2026', value: '943.58', statusCode: 'OK' },
          { indexDateString: '22-11-2026', value: 'NaN', statusCode: 'ND' },
          { indexDateString: '24-11-2026', value: '950.00', statusCode: 'OK' },
        ],
      },
    };
    expect(lastObservationOnOrBefore(answer, '2026-11-23')).to.deep.equal({
      fecha: '2026-11-21',
      valor: 943.58,
    });
    expect(lastObservationOnOrBefore(answer, '2026-11-24')).to.deep.equal({
      fecha: '2026-11-24',
      valor: 950,
    });
    expect(lastObservationOnOrBefore(answer, '2026-11-19')).to.equal(undefined);
    expect(lastObservationOnOrBefore({ Codigo: -5, Series: { Obs: null } }, '2026-11-23')).to.equal(
      undefined,
    );
  });
});

describe('POST /dtes exports when the Banco Central API refuses the credentials', function () {
  this.timeout(180_000);
  let bde: Awaited<ReturnType<typeof startBdeStandIn>>;
  let t: TestApi;
  let o: DteOrg;

  before(async () => {
    bde = await startBdeStandIn({});
    t = await startTestApi({
      env: { EXCHANGE_RATE_URL: bde.url, EXCHANGE_RATE_USER: USER, EXCHANGE_RATE_PASSWORD: 'wrong' },
    });
    o = await orgWithCafs(t, { tipos: [110] });
  });
  after(async () => {
    await t?.close();
    await bde?.close();
  });

  it('answers dte.tipo_cambio_unavailable with the API own explanation, and uses no folio', async () => {
    const { otra_moneda: _o, ...noRate } = body(110, o.rut);
    void _o;
    const before = await nextFolio(t, o, 110);
    const res = await emit(t, o, noRate);
    expect(res.status).to.equal(503);
    expect(res.body).to.include({ code: 'dte.tipo_cambio_unavailable', next_action: 'retry_later' });
    expect(res.body.message).to.include('Codigo -5: Invalid username or password');
    expect(res.body.message, 'the password is never echoed').to.not.include('wrong');
    expect(await nextFolio(t, o, 110)).to.equal(before);
  });
});
