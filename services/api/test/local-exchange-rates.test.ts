// The newcomer's first export: `npm start` starts the SII simulator with
// SII_SIMULATOR_EXCHANGE_RATES_FILE=packages/sii-simulator/seed/exchange-rates.json, so an export
// without otra_moneda is priced at once instead of failing with dte.tipo_cambio_unavailable. The
// simulator here is configured by its own reader from that same variable.
import path from 'node:path';

import { expect } from 'chai';

import { readSimulatorConfig, startSiiSimulator, type RunningSimulator } from '@dte/sii-simulator';

import { body, emit, nextFolio, orgWithCafs, type DteOrg } from './dtes-fixtures';
import { startTestApi, type TestApi } from './support/test-api';

const SEED = path.resolve(__dirname, '../../../packages/sii-simulator/seed/exchange-rates.json');

describe('POST /dtes exports against the local stack simulator seeded with exchange rates', function () {
  this.timeout(180_000);
  let sim: RunningSimulator;
  let t: TestApi;
  let o: DteOrg;

  before(async () => {
    sim = await startSiiSimulator({
      ...readSimulatorConfig({ SII_SIMULATOR_PORT: '0', SII_SIMULATOR_EXCHANGE_RATES_FILE: SEED }),
      cafKeyBits: 512,
    });
    t = await startTestApi({ env: { EXCHANGE_RATE_URL: sim.url } });
    o = await orgWithCafs(t, { tipos: [110] });
  });
  after(async () => {
    await t?.close();
    await sim?.close();
  });

  it('prices an export without otra_moneda at the seeded USD rate on a fresh simulator', async () => {
    const { otra_moneda: _o, ...noRate } = body(110, o.rut);
    void _o;
    const before = await nextFolio(t, o, 110);
    const res = await emit(t, o, noRate);
    expect(res.status, res.text).to.equal(202);
    // 20.5 USD at the seed's 950 CLP = 19475 CLP
    expect(res.body).to.include({ folio: before, monto_exento: 19475, monto_total: 19475 });
  });

  it('refuses a seed file with a bad rate, naming the file and the entry', async () => {
    const fs = await import('node:fs');
    const os = await import('node:os');
    const bad = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rates-')), 'rates.json');
    fs.writeFileSync(
      bad,
      JSON.stringify({
        rates: [
          { moneda: 'USD', fecha: '2024-01-01', valor: 950 },
          { moneda: 'usd', fecha: 'x', valor: 0 },
        ],
      }),
    );
    expect(() => readSimulatorConfig({ SII_SIMULATOR_EXCHANGE_RATES_FILE: bad })).to.throw(
      `${bad}: rates[1]`,
    );
  });
});
