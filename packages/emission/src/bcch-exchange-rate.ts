/**
 * The production exchange-rate source: the Banco Central de Chile's statistics API (BDE, "API
 * Base de Datos Estadísticos"), whose daily series include the dólar observado that export
 * documents are priced at. One call per rate:
 *
 *   GET https://si3.bcentral.cl/SieteRestWS/SieteRestWS.ashx?user=U&pass=P&function=GetSeries
 *       &timeseries=F073.TCO.PRE.Z.D&firstdate=YYYY-MM-DD&lastdate=YYYY-MM-DD
 *   → 200 { "Codigo": 0, "Descripcion": "Success",
 *           "Series": { "descripEsp": "...", "descripIng": "...", "seriesId": "F073.TCO.PRE.Z.D",
 *                       "Obs": [ { "indexDateString": "21-11-2026", "value": "943.58", "statusCode": "OK" },
 *                                { "indexDateString": "22-11-2026", "value": "NaN", "statusCode": "ND" } ] } }
 *
 * A Codigo other than 0 is an error the API explains in Descripcion (bad credentials, unknown
 * series). Days without a value (weekends, holidays) come as "NaN" / "ND". The rate of a date is
 * the last published value on or before it (the window asked covers LOOKBACK_DAYS before it).
 * Credentials are those the Banco Central gives on registration (EXCHANGE_RATE_USER,
 * EXCHANGE_RATE_PASSWORD: secrets). Series per ISO currency: USD is the dólar observado
 * (F073.TCO.PRE.Z.D) and EUR the Banco Central's euro series (F072.CLP.EUR.N.O.D); other currencies
 * need their series code in EXCHANGE_RATE_SERIES (JSON {"GBP": "..."}) from the BDE catalogue
 * (SearchSeries), and are refused until then.
 */
import type { SiiAddressConfig } from '@dte/sii-client';
import { ApiError } from '@dte/error-catalog';
import {
  HttpExchangeRateSource,
  SII_CURRENCY_ISO,
  UnconfiguredExchangeRateSource,
  type ExchangeRateSource,
} from './exchange-rate';

export const BCCH_DEFAULT_SERIES: Readonly<Record<string, string>> = {
  USD: 'F073.TCO.PRE.Z.D',
  EUR: 'F072.CLP.EUR.N.O.D',
};

/** days before the emission date the query covers (long weekends and holiday runs) */
const LOOKBACK_DAYS = 14;

const unavailable = (tpoMoneda: string, why: string) =>
  new ApiError(
    'dte.tipo_cambio_unavailable',
    `No exchange rate for ${tpoMoneda}: ${why}. No folio was used.`,
    {
      detail: { tpo_moneda: tpoMoneda },
    },
  );

interface BcchObservation {
  indexDateString?: unknown;
  value?: unknown;
  statusCode?: unknown;
}

/** The last published value on or before `fecha` (YYYY-MM-DD) in a GetSeries answer, if any. */
export function lastObservationOnOrBefore(
  body: unknown,
  fecha: string,
): { fecha: string; valor: number } | undefined {
  const obs = (body as { Series?: { Obs?: unknown } } | undefined)?.Series?.Obs;
  if (!Array.isArray(obs)) return undefined;
  let best: { fecha: string; valor: number } | undefined;
  for (const o of obs as BcchObservation[]) {
    const m = /^(\d{2})-(\d{2})-(\d{4})$/.exec(String(o.indexDateString ?? ''));
    if (!m || o.statusCode !== 'OK') continue;
    const iso = `${m[3]}-${m[2]}-${m[1]}`;
    const valor = Number(o.value);
    if (iso > fecha || !(valor > 0) || !Number.isFinite(valor)) continue;
    if (!best || iso > best.fecha) best = { fecha: iso, valor };
  }
  return best;
}

export class BcchExchangeRateSource implements ExchangeRateSource {
  private readonly series: Record<string, string>;

  constructor(
    private readonly url: string,
    private readonly credentials: { user: string; password: string },
    opts: { series?: Record<string, string>; timeoutMs?: number } = {},
  ) {
    this.series = { ...BCCH_DEFAULT_SERIES, ...opts.series };
    this.timeoutMs = opts.timeoutMs ?? 5000;
  }

  private readonly timeoutMs: number;

  async rate(tpoMoneda: string, fecha: string): Promise<number> {
    const iso = SII_CURRENCY_ISO[tpoMoneda];
    if (!iso) throw unavailable(tpoMoneda, 'the currency has no current ISO code');
    const series = this.series[iso];
    if (!series)
      throw unavailable(tpoMoneda, `no Banco Central series is configured for ${iso} (EXCHANGE_RATE_SERIES)`);
    const from = new Date(`${fecha}T00:00:00Z`);
    from.setUTCDate(from.getUTCDate() - LOOKBACK_DAYS);
    const q = new URL(this.url);
    q.searchParams.set('user', this.credentials.user);
    q.searchParams.set('pass', this.credentials.password);
    q.searchParams.set('function', 'GetSeries');
    q.searchParams.set('timeseries', series);
    q.searchParams.set('firstdate', from.toISOString().slice(0, 10));
    q.searchParams.set('lastdate', fecha);
    let res: Response;
    try {
      res = await fetch(q, { signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw unavailable(tpoMoneda, `the Banco Central API did not answer (${(err as Error).message})`);
    }
    if (!res.ok) throw unavailable(tpoMoneda, `the Banco Central API answered HTTP ${res.status}`);
    const body = (await res.json().catch(() => undefined)) as
      { Codigo?: unknown; Descripcion?: unknown } | undefined;
    if (!body) throw unavailable(tpoMoneda, 'the Banco Central API answered something that is not JSON');
    if (body.Codigo !== 0)
      throw unavailable(
        tpoMoneda,
        `the Banco Central API refused the query (Codigo ${String(body.Codigo)}: ${String(body.Descripcion ?? '')})`,
      );
    const found = lastObservationOnOrBefore(body, fecha);
    if (!found)
      throw unavailable(
        tpoMoneda,
        `the Banco Central published no ${series} value in the ${LOOKBACK_DAYS} days up to ${fecha}`,
      );
    return found.valor;
  }
}

/**
 * The source the api uses: the Banco Central API when EXCHANGE_RATE_URL is its endpoint, else a
 * /tipo-cambio source at EXCHANGE_RATE_URL or SII_BASE_URL (the simulator), else none (every
 * export without otra_moneda is refused, naming the setting).
 */
/** The configuration of the exchange-rate source (EXCHANGE_RATE_*, else the SII's address). */
export interface ExchangeRateConfig extends SiiAddressConfig {
  /**
   * the exchange-rate source of export documents: the Banco Central de Chile's API when the URL is
   * its SieteRestWS.ashx endpoint (with exchangeRateUser/Password), else a source speaking
   * GET {url}/tipo-cambio/... (the simulator); defaults to SII_BASE_URL
   */
  exchangeRateUrl?: string;
  /** Banco Central API credentials (secrets) */
  exchangeRateUser?: string;
  exchangeRatePassword?: string;
  /** Banco Central series per ISO currency, added to the defaults (USD, EUR) */
  exchangeRateSeries?: Record<string, string>;
}

/** The Banco Central de Chile's statistics API (GetSeries), as opposed to a /tipo-cambio source. */
export function isBcchUrl(u: string): boolean {
  return /\/SieteRestWS\.ashx$/i.test(new URL(u).pathname);
}

export function exchangeRateSourceFor(config: ExchangeRateConfig): ExchangeRateSource {
  const rateUrl = config.exchangeRateUrl ?? config.siiBaseUrl;
  if (!rateUrl) return new UnconfiguredExchangeRateSource();
  if (config.exchangeRateUrl && isBcchUrl(config.exchangeRateUrl))
    return new BcchExchangeRateSource(
      config.exchangeRateUrl,
      { user: config.exchangeRateUser ?? '', password: config.exchangeRatePassword ?? '' },
      { series: config.exchangeRateSeries, timeoutMs: config.siiTimeoutMs },
    );
  return new HttpExchangeRateSource(rateUrl, config.siiTimeoutMs);
}
