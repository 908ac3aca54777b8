/**
 * Boletas de honorarios electrónicas (BHE) at the SII. The SII issues them in its portal and
 * PROTOCOL.md names no web service for them: this client speaks the SII simulator's JSON API
 * (`{baseUrl}/bhe/emitir`, `/bhe/anular`; UNCONFIRMED, see packages/sii-simulator/src/routes/bhe.ts)
 * with the SOAP token of the certificate (`SiiClient.withToken`: renewed once on HTTP 401). Against
 * the real SII hosts it refuses to run rather than guess an endpoint.
 */
import type { SigningCredential } from '@dte/engine';

import type { SiiClient } from './client';
import { REAL_SII_ENDPOINTS, type SiiEnvironment } from './endpoints';
import { SiiError } from './errors';
import { sendHttp } from './http';

export interface BheEmision {
  rutEmisor: string;
  rutReceptor: string;
  fechaEmision: string;
  descripcion: string;
  montoBruto: number;
  retencion: number;
  retencionPor: 'receptor' | 'emisor';
}

export interface BheSii {
  numero: number;
  estado: string;
  tasa?: number;
  retencion?: number;
  liquido?: number;
}

function bheUrl(sii: SiiClient, env: SiiEnvironment, op: string): string {
  const base = sii.transport.endpoints[env].baseUrl.replace(/\/+$/, '');
  if (base === REAL_SII_ENDPOINTS[env].baseUrl)
    throw new SiiError(
      'protocol',
      'BHE: the SII publishes no web service for BHE (portal only); not available',
      {
        operation: `bhe.${op}`,
      },
    );
  return `${base}/bhe/${op}`;
}

async function postJson(
  sii: SiiClient,
  env: SiiEnvironment,
  credential: SigningCredential,
  op: string,
  payload: unknown,
): Promise<Record<string, unknown>> {
  const url = bheUrl(sii, env, op);
  const operation = `bhe.${op}`;
  return sii.withToken(env, credential, async (token) => {
    const body = Buffer.from(JSON.stringify(payload), 'utf8');
    const reply = await sendHttp({
      url,
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': String(body.length),
        Cookie: `TOKEN=${token}`,
        'User-Agent': sii.transport.userAgent,
      },
      body,
      timeoutMs: sii.transport.timeoutMs,
      operation,
    });
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(reply.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      if (reply.status < 500)
        throw new SiiError('protocol', `${operation}: HTTP ${reply.status} without JSON`, {
          operation,
          httpStatus: reply.status,
        });
    }
    if (reply.status >= 500)
      throw new SiiError('transient', `${operation}: HTTP ${reply.status}`, {
        operation,
        httpStatus: reply.status,
      });
    if (reply.status === 401)
      throw new SiiError('auth', `${operation}: token refused`, { operation, httpStatus: 401 });
    if (reply.status >= 400)
      throw new SiiError('rejected', `${operation}: ${String(json.error ?? reply.status)}`, {
        operation,
        httpStatus: reply.status,
        ...(json.codigo !== undefined ? { siiCode: String(json.codigo) } : {}),
        ...(typeof json.error === 'string' ? { glosa: json.error } : {}),
      });
    return json;
  });
}

export async function emitirBhe(
  sii: SiiClient,
  env: SiiEnvironment,
  credential: SigningCredential,
  b: BheEmision,
): Promise<BheSii> {
  const j = await postJson(sii, env, credential, 'emitir', b);
  if (typeof j.numero !== 'number')
    throw new SiiError('protocol', 'bhe.emitir: no numero in the answer', { operation: 'bhe.emitir' });
  return {
    numero: j.numero,
    estado: String(j.estado),
    ...(typeof j.tasa === 'number' ? { tasa: j.tasa } : {}),
    ...(typeof j.retencion === 'number' ? { retencion: j.retencion } : {}),
    ...(typeof j.liquido === 'number' ? { liquido: j.liquido } : {}),
  };
}

export async function anularBhe(
  sii: SiiClient,
  env: SiiEnvironment,
  credential: SigningCredential,
  q: { rutEmisor: string; numero: number; motivo: string },
): Promise<BheSii> {
  const j = await postJson(sii, env, credential, 'anular', q);
  return { numero: Number(j.numero), estado: String(j.estado) };
}

/**
 * One BHE as the SII has it now (`GET {baseUrl}/bhe/{rut}/{numero}`, the simulator's; UNCONFIRMED):
 * read to learn whether the receiver confirmed (ANULADA) or refused / let lapse (VIGENTE) an
 * annulment request (VCA).
 */
export async function consultarBhe(
  sii: SiiClient,
  env: SiiEnvironment,
  credential: SigningCredential,
  q: { rutEmisor: string; numero: number },
): Promise<BheSii> {
  const url = `${bheUrl(sii, env, 'consultar').replace(/\/consultar$/, '')}/${q.rutEmisor}/${q.numero}`;
  const operation = 'bhe.consultar';
  return sii.withToken(env, credential, async (token) => {
    const reply = await sendHttp({
      url,
      method: 'GET',
      headers: { Cookie: `TOKEN=${token}`, 'User-Agent': sii.transport.userAgent },
      timeoutMs: sii.transport.timeoutMs,
      operation,
    });
    if (reply.status >= 500)
      throw new SiiError('transient', `${operation}: HTTP ${reply.status}`, {
        operation,
        httpStatus: reply.status,
      });
    if (reply.status === 401)
      throw new SiiError('auth', `${operation}: token refused`, { operation, httpStatus: 401 });
    let j: Record<string, unknown>;
    try {
      j = JSON.parse(reply.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw new SiiError('protocol', `${operation}: HTTP ${reply.status} without JSON`, { operation });
    }
    if (reply.status >= 400 || typeof j.estado !== 'string')
      throw new SiiError('rejected', `${operation}: ${String(j.error ?? reply.status)}`, {
        operation,
        httpStatus: reply.status,
      });
    return { numero: Number(j.numero), estado: j.estado };
  });
}
