import { expect } from 'chai';
import { startTestApi, type TestApi } from './support/test-api';
import { body, emit, nextFolio, orgWithCafs, type DteOrg } from './dtes-fixtures';

describe('POST /dtes exports with no exchange-rate source configured', function () {
  this.timeout(180_000);
  let t: TestApi;
  let o: DteOrg;

  before(async () => {
    // neither SII_BASE_URL (simulator) nor EXCHANGE_RATE_URL: no source, and never a silent default
    t = await startTestApi({ env: { SII_BASE_URL: '', EXCHANGE_RATE_URL: '' } });
    o = await orgWithCafs(t, { tipos: [110] });
  });
  after(async () => t?.close());

  it('answers dte.tipo_cambio_unavailable naming the missing setting, and uses no folio', async () => {
    expect(t.config.siiBaseUrl).to.equal(undefined);
    const { otra_moneda: _o, ...noRate } = body(110, o.rut);
    void _o;
    const before = await nextFolio(t, o, 110);
    const res = await emit(t, o, noRate);
    expect(res.status).to.equal(503);
    expect(res.body).to.include({ code: 'dte.tipo_cambio_unavailable', next_action: 'retry_later' });
    expect(res.body.message).to.match(/EXCHANGE_RATE_URL/);
    expect(await nextFolio(t, o, 110)).to.equal(before);
  });

  it('still issues an export that brings its own otra_moneda rate', async () => {
    const res = await emit(t, o, body(110, o.rut));
    expect(res.status, res.text).to.equal(202);
  });
});
