/**
 * The Banco Central de Chile source of export exchange rates (src/bcch-exchange-rate.ts) against a
 * local stand-in of the BDE API's GetSeries (test/support/bde-stand-in.ts): the last published
 * value on or before the date, the window asked for, and every failure as
 * dte.tipo_cambio_unavailable naming its cause and never the password. The api's exports priced
 * through it: services/api/test/bcch-exchange-rate.test.ts.
 */
import { expect } from 'chai';
import { ApiError } from '@dte/error-catalog';
import {
  BcchExchangeRateSource,
  exchangeRateSourceFor,
  HttpExchangeRateSource,
  lastObservationOnOrBefore,
  UnconfiguredExchangeRateSource,
} from '../src';
import { bcchDate, PASSWORD, startBdeStandIn, USER } from './support/bde-stand-in';
import { refusal } from '../../../test/support/refusal';

describe('Banco Central de Chile exchange rates (BDE API GetSeries)', function () {
  this.timeout(30_000);
  const day = '2026-11-23';
  let bde: Awaited<ReturnType<typeof startBdeStandIn>>;
  before(async () => {
    bde = await startBdeStandIn({
      // the dólar observado: a value two days before, none on the day (published later / holiday)
      'F073.TCO.PRE.Z.D': [
        { date: bcchDate(day, -3), value: '940.12', status: 'OK' },
        { date: bcchDate(day, -2), value: '943.58', status: 'OK' },
        { date: bcchDate(day, -1), value: 'NaN', status: 'ND' },
        { date: bcchDate(day, 1), value: '999.99', status: 'OK' },
      ],
      'F072.CLP.EUR.N.O.D': [],
    });
  });
  after(async () => bde?.close());

  const source = (password = PASSWORD, series?: Record<string, string>) =>
    new BcchExchangeRateSource(bde.url, { user: USER, password }, { series, timeoutMs: 2000 });

  it('prices DOLAR USA at the last dólar observado on or before the date, asking for the 14 days up to it', async () => {
    expect(await source().rate('DOLAR USA', day)).to.equal(943.58);
    expect(Object.fromEntries(bde.requests.at(-1)!)).to.deep.equal({
      user: USER,
      pass: PASSWORD,
      function: 'GetSeries',
      timeseries: 'F073.TCO.PRE.Z.D',
      firstdate: '2026-11-09',
      lastdate: day,
    });
  });

  it('refuses, naming the cause: wrong credentials (never echoing the password), no series, nothing published, no ISO code', async () => {
    const denied = await refusal(source('otra-clave-9').rate('DOLAR USA', day), ApiError);
    expect(denied.code).to.equal('dte.tipo_cambio_unavailable');
    expect(denied.detail).to.deep.equal({ tpo_moneda: 'DOLAR USA' });
    expect(denied.message).to.include('Codigo -5: Invalid username or password');
    expect(denied.message).not.to.include('otra-clave-9');

    const noSeries = await refusal(source().rate('LIBRA EST', day), ApiError);
    expect(noSeries.message).to.include('GBP').and.include('EXCHANGE_RATE_SERIES');
    // a configured series the API does not know
    const unknown = await refusal(
      source(PASSWORD, { GBP: 'F000.NO.EXISTE' }).rate('LIBRA EST', day),
      ApiError,
    );
    expect(unknown.message).to.include('Codigo -50');

    const nothing = await refusal(source().rate('EURO', day), ApiError);
    expect(nothing.message).to.include(
      'published no F072.CLP.EUR.N.O.D value in the 14 days up to 2026-11-23',
    );

    const gone = await refusal(source().rate('MARCO AL', day), ApiError);
    expect(gone.message).to.include('no current ISO code');

    // nobody listening
    const closed = new BcchExchangeRateSource('http://127.0.0.1:9/SieteRestWS/SieteRestWS.ashx', {
      user: USER,
      password: PASSWORD,
    });
    expect((await refusal(closed.rate('DOLAR USA', day), ApiError)).message).to.include('did not answer');
  });

  it('chooses the source from the settings: the Banco Central by its endpoint, else /tipo-cambio, else none', async () => {
    const base = { siiTimeoutMs: 1000 };
    expect(
      exchangeRateSourceFor({ ...base, exchangeRateUrl: bde.url, exchangeRateUser: USER }),
    ).to.be.instanceOf(BcchExchangeRateSource);
    expect(exchangeRateSourceFor({ ...base, exchangeRateUrl: 'http://127.0.0.1:1/tc' })).to.be.instanceOf(
      HttpExchangeRateSource,
    );
    expect(exchangeRateSourceFor({ ...base, siiBaseUrl: 'http://127.0.0.1:1' })).to.be.instanceOf(
      HttpExchangeRateSource,
    );
    const none = exchangeRateSourceFor(base);
    expect(none).to.be.instanceOf(UnconfiguredExchangeRateSource);
    expect((await refusal(none.rate('DOLAR USA', day), ApiError)).message).to.include('EXCHANGE_RATE_URL');
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
