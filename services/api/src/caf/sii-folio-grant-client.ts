import { signSeedDocument } from '@dte/engine';
import { FolioGrantError, type FolioGrantClient, type FolioGrantRequest } from './folio-grant-client';

const SOAP_ENV = 'http://schemas.xmlsoap.org/soap/envelope/';

const escapeXml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

function soapEnvelope(method: string, params: Record<string, string>): string {
  const inner = Object.entries(params)
    .map(([k, v]) => `<${k}>${escapeXml(v)}</${k}>`)
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="${SOAP_ENV}"><soapenv:Body><${method}>${inner}</${method}></soapenv:Body></soapenv:Envelope>`;
}

/** Text of `<NAME>` (with or without a prefix) in an XML string, or undefined. */
function tag(xml: string, name: string): string | undefined {
  const m = new RegExp(
    `<(?:[A-Za-z0-9]+:)?${name}(?:\\s[^>]*)?>([\\s\\S]*?)</(?:[A-Za-z0-9]+:)?${name}>`,
  ).exec(xml);
  return m ? m[1].trim() : undefined;
}

/**
 * The SII folio grant over HTTP, as the simulator serves it (packages/sii-simulator,
 * src/routes/folios.ts): SOAP CrSeed.getSeed → sign the seed with the certificate →
 * GetTokenFromSeed.getToken → POST /{env}/folios with Cookie TOKEN and JSON
 * {rutEmisor, tipoDte, cantidad} → 200 application/xml CAF.
 *
 * Answers: 200 CAF; 403 the user is not authorized for the issuer → cert_not_authorized; other 4xx
 * → rejected; 5xx, timeouts, network errors and unreadable replies → unavailable. A token
 * refused with ESTADO -07 (certificate RUT not enrolled) → cert_not_authorized.
 */
export class SiiFolioGrantClient implements FolioGrantClient {
  constructor(private readonly opts: { baseUrl: string; timeoutMs: number }) {}

  private async post(
    url: string,
    body: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; text: string }> {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        body,
        headers,
        signal: AbortSignal.timeout(this.opts.timeoutMs),
      });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      throw new FolioGrantError('unavailable', `the SII did not answer: ${(err as Error).message}`);
    }
  }

  private async token(req: FolioGrantRequest): Promise<string> {
    const base = `${this.opts.baseUrl}/${req.environment}/DTEWS`;
    const soap = { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '' };
    const seedRes = await this.post(`${base}/CrSeed.jws`, soapEnvelope('getSeed', {}), soap);
    const seedReply = unescapeXml(tag(seedRes.text, 'getSeedReturn') ?? '');
    const seed = tag(seedReply, 'SEMILLA');
    if (seedRes.status !== 200 || tag(seedReply, 'ESTADO') !== '00' || !seed) {
      throw new FolioGrantError('unavailable', `getSeed failed (HTTP ${seedRes.status})`, {
        estado: tag(seedReply, 'ESTADO') ?? null,
      });
    }
    const signed = signSeedDocument(seed, req.credential);
    const tokRes = await this.post(
      `${base}/GetTokenFromSeed.jws`,
      soapEnvelope('getToken', { pszXml: signed }),
      soap,
    );
    const tokReply = unescapeXml(tag(tokRes.text, 'getTokenReturn') ?? '');
    const estado = tag(tokReply, 'ESTADO');
    const token = tag(tokReply, 'TOKEN');
    if (tokRes.status === 200 && estado === '00' && token) return token;
    const detail = { estado: estado ?? null, glosa: tag(tokReply, 'GLOSA') ?? null };
    if (estado === '-07')
      throw new FolioGrantError(
        'cert_not_authorized',
        'the certificate holder is not enrolled at the SII',
        detail,
      );
    throw new FolioGrantError(
      'unavailable',
      `getToken failed (HTTP ${tokRes.status}, ESTADO ${estado ?? '?'})`,
      detail,
    );
  }

  async requestFolios(req: FolioGrantRequest): Promise<{ cafXml: string }> {
    const token = await this.token(req);
    const res = await this.post(
      `${this.opts.baseUrl}/${req.environment}/folios`,
      JSON.stringify({ rutEmisor: req.rutEmisor, tipoDte: req.tipoDte, cantidad: req.cantidad }),
      { 'Content-Type': 'application/json', Cookie: `TOKEN=${token}` },
    );
    if (res.status === 200 && res.text.includes('AUTORIZACION')) return { cafXml: res.text };
    let sii: Record<string, unknown> = { status: res.status };
    try {
      sii = { status: res.status, ...(JSON.parse(res.text) as Record<string, unknown>) };
    } catch {
      // not JSON: keep the status only
    }
    if (res.status === 403)
      throw new FolioGrantError(
        'cert_not_authorized',
        'the SII says the user may not stamp for the issuer',
        sii,
      );
    if (res.status === 401) throw new FolioGrantError('unavailable', 'the SII refused its own token', sii);
    if (res.status >= 400 && res.status < 500)
      throw new FolioGrantError('rejected', `the SII refused the grant (HTTP ${res.status})`, sii);
    throw new FolioGrantError('unavailable', `the SII answered HTTP ${res.status}`, sii);
  }
}
