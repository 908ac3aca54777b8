import { ApiError } from '@dte/error-catalog';

/**
 * Exchange rates of export documents (110, 112) that carry no otra_moneda: CLP per unit of the
 * document currency on the emission date, from an HTTP source speaking
 * `GET {base}/tipo-cambio/{ISO 4217}/{YYYY-MM-DD}` → `{ valor }` (the SII simulator serves it;
 * the SII itself publishes none). The SII names currencies in Spanish (tpo_moneda); those of
 * currencies that no longer exist have no ISO code and so no rate. Any failure is
 * dte.tipo_cambio_unavailable (503, retry_later), raised before a folio is taken.
 */
export const SII_CURRENCY_ISO: Readonly<Record<string, string>> = {
  'DOLAR USA': 'USD',
  EURO: 'EUR',
  'LIBRA EST': 'GBP',
  YEN: 'JPY',
  'DOLAR CAN': 'CAD',
  'DOLAR AUST': 'AUD',
  'DOLAR NZ': 'NZD',
  'DOLAR HK': 'HKD',
  'DOLAR SIN': 'SGD',
  'DOLAR TAI': 'TWD',
  'FRANCO SZ': 'CHF',
  RENMINBI: 'CNY',
  'CORONA DIN': 'DKK',
  'CORONA NOR': 'NOK',
  'CORONA SC': 'SEK',
  'PESO MEX': 'MXN',
  'PESO COL': 'COP',
  'PESO URUG': 'UYU',
  PESO: 'ARS',
  'NUEVO SOL': 'PEN',
  GUARANI: 'PYG',
  BOLIVIANO: 'BOB',
  BOLIVAR: 'VES',
  RAND: 'ZAR',
  RUPIA: 'INR',
  DIRHAM: 'AED',
};

export interface ExchangeRateSource {
  /** CLP per unit of `tpoMoneda` on `fecha` (YYYY-MM-DD) */
  rate(tpoMoneda: string, fecha: string): Promise<number>;
}

const unavailable = (tpoMoneda: string, why: string) =>
  new ApiError(
    'dte.tipo_cambio_unavailable',
    `No exchange rate for ${tpoMoneda}: ${why}. No folio was used.`,
    {
      detail: { tpo_moneda: tpoMoneda },
    },
  );

/** No source configured (EXCHANGE_RATE_URL unset and no simulator): every export without otra_moneda is refused. */
export class UnconfiguredExchangeRateSource implements ExchangeRateSource {
  async rate(tpoMoneda: string): Promise<number> {
    throw unavailable(tpoMoneda, 'no exchange-rate source is configured (EXCHANGE_RATE_URL)');
  }
}

export class HttpExchangeRateSource implements ExchangeRateSource {
  constructor(
    private readonly baseUrl: string,
    private readonly timeoutMs = 5000,
  ) {}

  async rate(tpoMoneda: string, fecha: string): Promise<number> {
    const iso = SII_CURRENCY_ISO[tpoMoneda];
    if (!iso) throw unavailable(tpoMoneda, 'the currency has no current ISO code');
    let res: Response;
    try {
      res = await fetch(`${this.baseUrl}/tipo-cambio/${iso}/${fecha}`, {
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw unavailable(tpoMoneda, `the source did not answer (${(err as Error).message})`);
    }
    if (!res.ok) throw unavailable(tpoMoneda, `the source answered ${res.status}`);
    const body = (await res.json().catch(() => undefined)) as { valor?: unknown } | undefined;
    const valor = Number(body?.valor);
    if (!(valor > 0) || !Number.isFinite(valor))
      throw unavailable(tpoMoneda, 'the source gave no usable rate');
    return valor;
  }
}
