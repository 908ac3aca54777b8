/**
 * A local stand-in of the Banco Central de Chile's BDE API (GetSeries), answering in the real
 * response format (Codigo/Descripcion/Series.Obs with dd-mm-yyyy dates, "NaN"/"ND" on days without
 * a value), with the credentials USER / PASSWORD. Used by the emission package's tests of
 * BcchExchangeRateSource and by the api's tests of exports priced through it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export const USER = 'integracion@empresa.cl';
export const PASSWORD = 'bde-Secret-1';

/** dd-mm-yyyy of `iso` shifted by `days` */
export function bcchDate(iso: string, days: number): string {
  const d = new Date(`${iso}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  const [y, m, dd] = d.toISOString().slice(0, 10).split('-');
  return `${dd}-${m}-${y}`;
}

/** A stand-in of https://si3.bcentral.cl/SieteRestWS/SieteRestWS.ashx serving fixed series. */
export async function startBdeStandIn(
  series: Record<string, { date: string; value: string; status: string }[]>,
) {
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
