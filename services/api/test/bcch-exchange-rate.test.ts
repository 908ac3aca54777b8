// Exports priced at the Banco Central de Chile's published rate: the api configured with
// EXCHANGE_RATE_URL at a local stand-in of the BDE API's GetSeries endpoint
// (packages/emission/test/support/bde-stand-in.ts), and the api's own config reader for the
// settings. The source itself: packages/emission/test/bcch-exchange-rate.test.ts.
import { expect } from 'chai';

import { loadConfig } from '../src/config';
import { body, emit, nextFolio, orgWithCafs, today, type DteOrg } from './dtes-fixtures';
import { startTestApi, type TestApi } from './support/test-api';
import {
  bcchDate,
  PASSWORD,
  startBdeStandIn,
  USER,
} from '../../../packages/emission/test/support/bde-stand-in';

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
