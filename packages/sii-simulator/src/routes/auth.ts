/**
 * CrSeed.getSeed and GetTokenFromSeed.getToken (SII "Autenticación automática" v1.9).
 *
 * getToken answers, in this order of checks: 02 unreadable XML; 04 no Signature; 06 no Semilla;
 * 11 no X509Certificate; 05 signature does not verify (21 when the KeyValue is not the
 * certificate's key); -3 certificate not valid now; 08 seed unknown ("NO Existe SEED"), expired
 * ("TIME-OUT DEL SEED") or already used ("NO PUEDO ACT. SEED CON TOKEN"); -07 the certificate's RUT
 * is not enrolled (strict mode); else 00 with a TOKEN.
 */
import type { Context } from 'koa';
import { verifySeedDocument } from '../engine';
import { applyFault, readBody, xmlReply } from '../http';
import { normalizeRut } from '../rut';
import type { Sim } from '../sim';
import {
  parseSoapCall,
  rpcParam,
  rpcResponse,
  siiRespuesta,
  elements,
  soapFault,
  SoapRequestError,
} from '../soap';
import { REAL_HOST, type SiiEnv } from '../types';
import { findDescendant, parseXml } from '../xml';

export async function crSeed(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'getSeed')) return;
  const call = await soapCall(ctx);
  if (!call) return;
  if (call.method !== 'getSeed') return noSuchOperation(ctx, call.method);
  const e = sim.state.env[env];
  const seed = e.newSeed();
  e.seeds.set(seed, { seed, issuedAt: sim.state.now() });
  const ret = siiRespuesta(elements([['ESTADO', '00']]), elements([['SEMILLA', seed]]));
  xmlReply(ctx, rpcResponse(`https://${REAL_HOST[env]}/DTEWS/CrSeed.jws`, 'getSeed', ret));
}

export async function getTokenFromSeed(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'getToken')) return;
  const call = await soapCall(ctx);
  if (!call) return;
  if (call.method !== 'getToken') return noSuchOperation(ctx, call.method);
  const answer = (estado: string, glosa: string, token?: string) =>
    xmlReply(
      ctx,
      rpcResponse(
        `https://${REAL_HOST[env]}/DTEWS/GetTokenFromSeed.jws`,
        'getToken',
        siiRespuesta(
          elements([
            ['ESTADO', estado],
            ['GLOSA', glosa],
          ]),
          token === undefined ? undefined : elements([['TOKEN', token]]),
        ),
      ),
    );
  const pszXml = rpcParam(call, ['pszXml'], 'pszXml') ?? '';
  const r = tokenFromSignedSeed(sim, env, pszXml);
  answer(r.estado, r.glosa, r.token);
}

export interface TokenAnswer {
  estado: string;
  glosa: string;
  token?: string;
}

/**
 * The getToken checks and the token they issue, shared by the SOAP GetTokenFromSeed and the
 * boleta REST `boleta.electronica.token` (which takes the same signed seed document).
 */
export function tokenFromSignedSeed(sim: Sim, env: SiiEnv, pszXml: string): TokenAnswer {
  const answer = (estado: string, glosa: string, token?: string): TokenAnswer =>
    token === undefined ? { estado, glosa } : { estado, glosa, token };
  let doc;
  try {
    doc = parseXml(pszXml);
  } catch {
    return answer('02', 'XML Invalido (SAXException), funcion valSignedXml');
  }
  if (!findDescendant(doc, 'Signature')) return answer('04', 'XML Invalido, elemento "Signature" no existe');
  const semillaEl = findDescendant(doc, 'Semilla');
  if (!semillaEl) return answer('06', 'XML Invalido, elemento "Semilla" no existe');
  if (!findDescendant(doc, 'X509Certificate'))
    return answer('11', 'XML Invalido, elemento "Certificate" no existe, funcion getCertificado');

  const verified = verifySeedDocument(pszXml);
  if (!verified.valid) {
    if (/public key|keyvalue|does not match|no coincide/i.test(verified.error ?? ''))
      return answer('21', 'Firma invalida (La llave publica no coincide con la del certificado)');
    return answer('05', 'XML Invalido, firma invalida, funcion valSignedXml');
  }
  const cert = verified.certificate;
  const now = sim.state.now();
  if (!cert || now < cert.notBefore.getTime() || now > cert.notAfter.getTime())
    return answer('-3', 'Error en Autenticacion: certificado no vigente');

  const e = sim.state.env[env];
  const seedText = (verified.seed ?? semillaEl.textContent ?? '').trim();
  const seed = e.seeds.get(seedText) ?? e.seeds.get(seedText.padStart(12, '0'));
  if (!seed) return answer('08', 'ERROR RETORNO: NO Existe SEED');
  if (seed.usedAt !== undefined) return answer('08', 'ERROR RETORNO: NO PUEDO ACT. SEED CON TOKEN');
  if (now - seed.issuedAt > sim.options.seedTtlMs) return answer('08', 'ERROR RETORNO: TIME-OUT DEL SEED');

  const rut = normalizeRut(cert.rut);
  if (!rut || (!sim.options.autoEnrol && !e.isKnownUser(rut)))
    return answer(
      '-07',
      'Error (12) parse ERROR en Validacion del RUT (verificar que el usuario se encuentre registrado en el SII con la opcion de autenticacion mediante "Certificado Digital")',
    );
  seed.usedAt = now;
  const token = e.newToken();
  e.tokens.set(token, {
    token,
    rut,
    issuedAt: now,
    expiresAt: now + sim.options.tokenTtlMs,
    certificateSubject: cert.subject,
  });
  return answer('00', 'Token Creado', token);
}

/** Reads and parses the SOAP call; answers a Fault itself and returns undefined when it cannot. */
export async function soapCall(ctx: Context) {
  try {
    return parseSoapCall((await readBody(ctx)).toString('utf8'));
  } catch (err) {
    const msg = err instanceof SoapRequestError ? err.message : String(err);
    xmlReply(ctx, soapFault('soapenv:Client', msg), 500);
    return undefined;
  }
}

export function noSuchOperation(ctx: Context, method: string): void {
  xmlReply(ctx, soapFault('soapenv:Server.userException', `No such operation '${method}'`), 500);
}
