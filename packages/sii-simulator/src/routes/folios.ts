/**
 * Folio grants. The SII grants CAFs through a web form; the simulator's request is:
 *
 *   POST /{env}/folios   Cookie: TOKEN=…   { rutEmisor, tipoDte, cantidad }
 *   → 200 application/xml: the AUTORIZACION (CAF) for folios last+1 … last+cantidad, signed
 *     with this environment's SII key (IDK 100 / 300), FA = today.
 *
 * 401 without a valid token, 403 when the user is not authorized for the issuer, 422 for a
 * bad body (cantidad 1..maxFoliosPerCaf). The last folio granted per (environment, issuer,
 * type) is kept, so ranges never overlap.
 */
import type { Context } from 'koa';
import { chileDate } from '../chile-time';
import { createTestCaf } from '../engine';
import { applyFault, cookieToken, jsonError, readJson } from '../http';
import { normalizeRut, isValidRut } from '../rut';
import { authorize, checkToken, type Sim } from '../sim';
import type { SiiEnv } from '../types';

const TYPES = [33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112];

export async function requestFolios(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'folios')) return;
  const now = sim.state.now();
  const e = sim.state.env[env];
  const token = checkToken(e, cookieToken(ctx), now);
  if (!token.ok) return jsonError(ctx, 401, 'token_invalido', `token ${token.reason}`);
  let body: Record<string, unknown>;
  try {
    body = (await readJson(ctx)) as Record<string, unknown>;
  } catch {
    return jsonError(ctx, 422, 'json_invalido', 'body must be JSON');
  }
  const rut = normalizeRut(String(body.rutEmisor ?? ''));
  const tipo = Number(body.tipoDte);
  const cantidad = Number(body.cantidad);
  if (!rut || !isValidRut(rut)) return jsonError(ctx, 422, 'rut_invalido', 'rutEmisor must be a valid RUT');
  if (!TYPES.includes(tipo))
    return jsonError(ctx, 422, 'tipo_invalido', `tipoDte must be one of ${TYPES.join(', ')}`);
  if (!Number.isInteger(cantidad) || cantidad < 1 || cantidad > sim.options.maxFoliosPerCaf)
    return jsonError(ctx, 422, 'cantidad_invalida', `cantidad must be 1..${sim.options.maxFoliosPerCaf}`);
  if (!authorize(sim, e, token.token.rut, rut))
    return jsonError(ctx, 403, 'sin_permiso', `${token.token.rut} is not authorized for ${rut}`);
  const key = `${rut}|${tipo}`;
  const desde = (e.lastFolio.get(key) ?? 0) + 1;
  const hasta = desde + cantidad - 1;
  const xml = createTestCaf({
    siiKey: sim.siiKeys[env],
    rutEmisor: rut,
    razonSocial: e.companies.get(rut)?.razonSocial ?? `EMPRESA ${rut}`,
    tipoDte: tipo,
    desde,
    hasta,
    fechaAutorizacion: chileDate(now),
    keyBits: sim.options.cafKeyBits,
  });
  e.lastFolio.set(key, hasta);
  ctx.type = 'application/xml';
  ctx.body = xml;
}
