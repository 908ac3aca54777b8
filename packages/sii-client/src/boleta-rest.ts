/**
 * The SII's boleta REST channel (PROTOCOL.md §1 and §11; every detail UNCONFIRMED against an SII
 * document, taken from Odoo and third-party clients): seed, token and status at
 * `{api}/recursos/v1/…` and the upload at `{upload host}/recursos/v1/boleta.electronica.envio`.
 * Tokens are obtained like the SOAP ones (the same signed `getToken` document) but through
 * `boleta.electronica.semilla` / `.token`, cached under their own key prefix, and sent as
 * `Cookie: TOKEN=…`; an HTTP 401 drops the token and retries once with a new one.
 */
import { signSeedDocument, type SigningCredential } from '@dte/engine';

import { InMemoryTokenCache, tokenCacheKey, type TokenCache } from './auth';
import type { SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import { sendHttp, type HttpReply } from './http';
import { parseRespuesta, requireEstado, bodyValue } from './respuesta';
import { DEFAULT_USER_AGENT } from './transport';
import { multipartBody } from './upload';
import type { DocumentStatus } from './status';
import { excerpt } from './xml';

export interface BoletaRestEndpoints {
  /** seed, token and status: `https://api.sii.cl/recursos/v1` (certification `apicert`) */
  apiUrl: string;
  /** the upload: `https://rahue.sii.cl/recursos/v1` (certification `pangal`) */
  uploadUrl: string;
}

export const REAL_BOLETA_REST_ENDPOINTS: Record<SiiEnvironment, BoletaRestEndpoints> = {
  cert: { apiUrl: 'https://apicert.sii.cl/recursos/v1', uploadUrl: 'https://pangal.sii.cl/recursos/v1' },
  prod: { apiUrl: 'https://api.sii.cl/recursos/v1', uploadUrl: 'https://rahue.sii.cl/recursos/v1' },
};

/** The SII simulator serves the channel under `<root>/<env>/recursos/v1`. */
export function boletaSimulatorEndpoints(rootUrl: string): Record<SiiEnvironment, BoletaRestEndpoints> {
  const root = rootUrl.replace(/\/+$/, '');
  const at = (env: SiiEnvironment) => ({
    apiUrl: `${root}/${env}/recursos/v1`,
    uploadUrl: `${root}/${env}/recursos/v1`,
  });
  return { cert: at('cert'), prod: at('prod') };
}

export interface BoletaRestOptions {
  endpoints?: Record<SiiEnvironment, BoletaRestEndpoints>;
  timeoutMs?: number;
  uploadTimeoutMs?: number;
  userAgent?: string;
  tokenCache?: TokenCache;
  tokenTtlSeconds?: number;
}

/** The answer to an envío: the SII took the file (estado REC) under a track id. */
export interface BoletaEnvioReceipt {
  trackId: string;
  estado: string;
  fechaRecepcion?: string;
}

/** One finding of the SII on one boleta (`detalle_rep_rech[].error[]`). */
export interface BoletaSiiError {
  seccion: string;
  linea: number | null;
  nivel: number | null;
  codigo: number | string | null;
  descripcion: string;
  detalle: string | null;
}

function siiErrors(v: unknown): BoletaSiiError[] {
  if (!Array.isArray(v)) return [];
  return (v as Record<string, unknown>[])
    .filter((e) => e && typeof e === 'object')
    .map((e) => {
      const n = (x: unknown) =>
        x === undefined || x === null || x === '' || !Number.isFinite(Number(x)) ? null : Number(x);
      const codigo = e.codigo === undefined || e.codigo === null ? null : (n(e.codigo) ?? String(e.codigo));
      return {
        seccion: String(e.seccion ?? ''),
        linea: n(e.linea),
        nivel: n(e.nivel),
        codigo,
        descripcion: String(e.descripcion ?? ''),
        detalle: e.detalle === undefined || e.detalle === null ? null : String(e.detalle),
      };
    });
}

export interface BoletaEnvioStatus {
  trackId: string;
  /** REC, SOK, FOK, CRT, PDR/PRD, EPR, or a rejection of the whole send (RSC, RFR, RCT) */
  estado: string;
  /** per type once EPR */
  estadistica: { tipo: number; informados: number; aceptados: number; rechazados: number; reparos: number }[];
  /**
   * boletas not accepted clean: estado RCH (rejected), RPR/RLV (accepted with objections), with
   * the SII's findings (`error[]`: section, line, level, code, description, detail)
   */
  detalle: {
    tipo: number;
    folio: number;
    estado: string;
    descripcion: string[];
    errores: BoletaSiiError[];
  }[];
  errores: string[];
}

const TOKEN_PREFIX = 'sii:boleta-token';

export class BoletaRestClient {
  private readonly endpoints: Record<SiiEnvironment, BoletaRestEndpoints>;
  private readonly timeoutMs: number;
  private readonly uploadTimeoutMs: number;
  private readonly userAgent: string;
  private readonly cache: TokenCache;
  private readonly ttl: number;
  private readonly logins = new Map<string, Promise<string>>();

  constructor(opts: BoletaRestOptions = {}) {
    this.endpoints = opts.endpoints ?? REAL_BOLETA_REST_ENDPOINTS;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.uploadTimeoutMs = opts.uploadTimeoutMs ?? 120_000;
    this.userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
    this.cache = opts.tokenCache ?? new InMemoryTokenCache();
    this.ttl = opts.tokenTtlSeconds ?? 300;
  }

  /** A token for the certificate: cached, or semilla → signed seed → token. */
  async token(env: SiiEnvironment, credential: SigningCredential, fresh = false): Promise<string> {
    const key = tokenCacheKey(TOKEN_PREFIX, env, credential);
    if (!fresh) {
      const cached = await this.cache.get(key);
      if (cached) return cached;
    }
    let login = this.logins.get(key);
    if (!login) {
      login = (async () => {
        const api = this.endpoints[env].apiUrl;
        const seedReply = await this.http(
          'boleta.electronica.semilla',
          `${api}/boleta.electronica.semilla`,
          'GET',
        );
        const seedResp = parseRespuesta(seedReply.body.toString('utf8'), 'boleta.electronica.semilla');
        const seed = bodyValue(seedResp, 'SEMILLA');
        if (requireEstado(seedResp, 'boleta.electronica.semilla') !== '00' || !seed || !/^\d+$/.test(seed))
          throw new SiiError('transient', 'boleta.electronica.semilla: no seed', {
            operation: 'boleta.electronica.semilla',
            responseExcerpt: excerpt(seedResp.raw),
          });
        const signed = signSeedDocument(seed, credential);
        const reply = await this.http('boleta.electronica.token', `${api}/boleta.electronica.token`, 'POST', {
          body: Buffer.from(signed, 'utf8'),
          contentType: 'application/xml',
        });
        const r = parseRespuesta(reply.body.toString('utf8'), 'boleta.electronica.token');
        const estado = requireEstado(r, 'boleta.electronica.token');
        const token = bodyValue(r, 'TOKEN');
        if (estado !== '00' || !token || !/^[\x21-\x7e]+$/.test(token) || /[;,]/.test(token))
          throw new SiiError(
            estado === '08' ? 'transient' : 'auth',
            `boleta.electronica.token: ESTADO ${estado}`,
            {
              operation: 'boleta.electronica.token',
              siiCode: estado,
              ...(r.hdr.GLOSA ? { glosa: r.hdr.GLOSA } : {}),
            },
          );
        await this.cache.set(key, token, this.ttl);
        return token;
      })().finally(() => this.logins.delete(key));
      this.logins.set(key, login);
      login.catch(() => undefined);
    }
    return login;
  }

  /** Runs `call` with a token; on 401 drops it and retries once with a new one. */
  private async withToken(
    env: SiiEnvironment,
    credential: SigningCredential,
    call: (token: string) => Promise<HttpReply>,
  ): Promise<HttpReply> {
    const token = await this.token(env, credential);
    const first = await call(token);
    if (first.status !== 401) return first;
    await this.cache.delete(tokenCacheKey(TOKEN_PREFIX, env, credential), token);
    const second = await call(await this.token(env, credential, true));
    if (second.status === 401)
      throw new SiiError('auth', 'boleta REST: token refused twice (HTTP 401)', { httpStatus: 401 });
    return second;
  }

  /**
   * POST boleta.electronica.envio: the EnvioBOLETA bytes as the `archivo` part, with the same form
   * fields as DTEUpload. Resolves to the receipt (a track id); a refusal is a `rejected` SiiError
   * (its HTTP status and the SII's codigo as siiCode), a 5xx or network failure `transient`.
   */
  async enviar(q: {
    env: SiiEnvironment;
    credential: SigningCredential;
    rutCompany: string;
    xml: Buffer;
    filename?: string;
  }): Promise<BoletaEnvioReceipt> {
    const [senderBody, senderDv] = q.credential.info.rut.split('-');
    const [companyBody, companyDv] = q.rutCompany.split('-');
    const { body, contentType } = await multipartBody([
      ['rutSender', senderBody!],
      ['dvSender', senderDv!.toUpperCase()],
      ['rutCompany', companyBody!],
      ['dvCompany', companyDv!.toUpperCase()],
      ['archivo', { bytes: q.xml, filename: q.filename ?? 'envio-boleta.xml', type: 'text/xml' }],
    ]);
    const url = `${this.endpoints[q.env].uploadUrl}/boleta.electronica.envio`;
    const reply = await this.withToken(q.env, q.credential, (token) =>
      this.http('boleta.electronica.envio', url, 'POST', { body, contentType, token, upload: true }),
    );
    const json = this.json(reply, 'boleta.electronica.envio');
    const trackid = json.trackid;
    if (reply.status !== 200 || (typeof trackid !== 'number' && typeof trackid !== 'string'))
      throw new SiiError('protocol', 'boleta.electronica.envio: 200 without a trackid', {
        operation: 'boleta.electronica.envio',
        responseExcerpt: excerpt(reply.body.toString('utf8')),
      });
    return {
      trackId: String(trackid),
      estado: String(json.estado ?? 'REC'),
      ...(typeof json.fecha_recepcion === 'string' ? { fechaRecepcion: json.fecha_recepcion } : {}),
    };
  }

  /** GET boleta.electronica.envio/{rut}-{dv}-{trackid}: where the send stands. */
  async estado(q: {
    env: SiiEnvironment;
    credential: SigningCredential;
    rutCompany: string;
    trackId: string;
  }): Promise<BoletaEnvioStatus> {
    const url = `${this.endpoints[q.env].apiUrl}/boleta.electronica.envio/${q.rutCompany}-${q.trackId}`;
    const reply = await this.withToken(q.env, q.credential, (token) =>
      this.http('boleta.electronica.envio(estado)', url, 'GET', { token }),
    );
    const json = this.json(reply, 'boleta.electronica.envio(estado)');
    if (reply.status !== 200 || typeof json.estado !== 'string')
      throw new SiiError('protocol', 'boleta estado: no estado in the answer', {
        operation: 'boleta.electronica.envio(estado)',
        responseExcerpt: excerpt(reply.body.toString('utf8')),
      });
    const arr = (v: unknown) => (Array.isArray(v) ? (v as Record<string, unknown>[]) : []);
    return {
      trackId: q.trackId,
      estado: json.estado,
      estadistica: arr(json.estadistica).map((s) => ({
        tipo: Number(s.tipo),
        informados: Number(s.informados ?? 0),
        aceptados: Number(s.aceptados ?? 0),
        rechazados: Number(s.rechazados ?? 0),
        reparos: Number(s.reparos ?? 0),
      })),
      detalle: arr(json.detalle_rep_rech).map((d) => ({
        tipo: Number(d.tipo),
        folio: Number(d.folio),
        estado: String(d.estado),
        descripcion: Array.isArray(d.descripcion)
          ? d.descripcion.map(String)
          : d.descripcion
            ? [String(d.descripcion)]
            : [],
        errores: siiErrors(d.error),
      })),
      errores: Array.isArray(json.errores) ? json.errores.map(String) : [],
    };
  }

  /**
   * One boleta's status (`boleta.electronica/{rut}-{dv}-{tipo}-{folio}/estado`, UNCONFIRMED shape),
   * in QueryEstDte's vocabulary (DOK, DNK, FAU, EMP…) so callers read it like getEstDte.
   */
  async documentStatus(q: {
    env: SiiEnvironment;
    credential: SigningCredential;
    rutCompany: string;
    rutReceptor: string;
    tipoDte: number;
    folio: number;
    /** YYYY-MM-DD */
    fechaEmision: string;
    montoTotal: number;
  }): Promise<DocumentStatus> {
    const [rb, rdv] = q.rutReceptor.split('-');
    const [y, m, d] = q.fechaEmision.split('-');
    const url =
      `${this.endpoints[q.env].apiUrl}/boleta.electronica/${q.rutCompany}-${q.tipoDte}-${q.folio}/estado` +
      `?rut_receptor=${rb}&dv_receptor=${rdv}&monto=${q.montoTotal}&fechaEmision=${d}-${m}-${y}`;
    const reply = await this.withToken(q.env, q.credential, (token) =>
      this.http('boleta.electronica(estado)', url, 'GET', { token }),
    );
    const json = this.json(reply, 'boleta.electronica(estado)');
    if (typeof json.estado !== 'string')
      throw new SiiError('protocol', 'boleta estado: no estado in the answer', {
        operation: 'boleta.electronica(estado)',
      });
    const glosa = typeof json.glosa === 'string' ? json.glosa : undefined;
    return {
      estado: json.estado,
      ...(glosa ? { glosaEstado: glosa } : {}),
      fields: Object.fromEntries(Object.entries(json).map(([k, v]) => [k, String(v)])),
      raw: reply.body.toString('utf8'),
    };
  }

  /** JSON body of a 2xx/4xx answer; 5xx and non-JSON are transient/protocol SiiErrors. */
  private json(reply: HttpReply, operation: string): Record<string, unknown> {
    if (reply.status >= 500)
      throw new SiiError('transient', `${operation}: HTTP ${reply.status}`, {
        operation,
        httpStatus: reply.status,
      });
    let json: unknown;
    try {
      json = JSON.parse(reply.body.toString('utf8'));
    } catch {
      throw new SiiError('protocol', `${operation}: HTTP ${reply.status} without JSON`, {
        operation,
        httpStatus: reply.status,
        responseExcerpt: excerpt(reply.body.toString('utf8')),
      });
    }
    const o = (json ?? {}) as Record<string, unknown>;
    if (reply.status >= 400)
      throw new SiiError('rejected', `${operation}: HTTP ${reply.status} ${String(o.error ?? '')}`, {
        operation,
        httpStatus: reply.status,
        ...(o.codigo !== undefined ? { siiCode: String(o.codigo) } : {}),
        ...(typeof o.error === 'string' ? { glosa: o.error } : {}),
      });
    return o;
  }

  private async http(
    operation: string,
    url: string,
    method: 'GET' | 'POST',
    o: { body?: Buffer; contentType?: string; token?: string; upload?: boolean } = {},
  ): Promise<HttpReply> {
    const reply = await sendHttp({
      url,
      method,
      headers: {
        'User-Agent': this.userAgent,
        Accept: 'application/json, application/xml',
        ...(o.token ? { Cookie: `TOKEN=${o.token}` } : {}),
        ...(o.contentType ? { 'Content-Type': o.contentType } : {}),
        ...(o.body ? { 'Content-Length': String(o.body.length) } : {}),
      },
      ...(o.body ? { body: o.body } : {}),
      timeoutMs: o.upload ? this.uploadTimeoutMs : this.timeoutMs,
      operation,
    });
    if (reply.status >= 500)
      throw new SiiError('transient', `${operation}: HTTP ${reply.status}`, {
        operation,
        httpStatus: reply.status,
      });
    return reply;
  }
}

const perClient = new WeakMap<object, BoletaRestClient>();

/**
 * The boleta REST client that goes with a SiiClient: the real SII's boleta hosts when the client
 * speaks to the real SII, else (a simulator or a proxy serving an environment under one base
 * URL) `<baseUrl>/recursos/v1`. One per SiiClient, so its token cache is shared by its callers.
 */
export function boletaRestClientFor(sii: {
  transport: {
    endpoints: Record<SiiEnvironment, { baseUrl: string }>;
    timeoutMs: number;
    uploadTimeoutMs: number;
    userAgent: string;
  };
}): BoletaRestClient {
  let c = perClient.get(sii);
  if (!c) {
    const t = sii.transport;
    const real = (env: SiiEnvironment) =>
      t.endpoints[env].baseUrl.replace(/\/+$/, '') ===
      (env === 'cert' ? 'https://maullin.sii.cl' : 'https://palena.sii.cl');
    const at = (env: SiiEnvironment): BoletaRestEndpoints =>
      real(env)
        ? REAL_BOLETA_REST_ENDPOINTS[env]
        : {
            apiUrl: `${t.endpoints[env].baseUrl.replace(/\/+$/, '')}/recursos/v1`,
            uploadUrl: `${t.endpoints[env].baseUrl.replace(/\/+$/, '')}/recursos/v1`,
          };
    c = new BoletaRestClient({
      endpoints: { cert: at('cert'), prod: at('prod') },
      timeoutMs: t.timeoutMs,
      uploadTimeoutMs: t.uploadTimeoutMs,
      userAgent: t.userAgent,
    });
    perClient.set(sii, c);
  }
  return c;
}
