/**
 * QueryEstUp.getEstUp(RutCompania, DvCompania, TrackId, Token) and
 * QueryEstDte.getEstDte(RutConsultante, DvConsultante, RutCompania, DvCompania, RutReceptor,
 * DvReceptor, TipoDte, FolioDte, FechaEmisionDte (DDMMAAAA), MontoDte, Token).
 */
import type { Context } from 'koa';
import { chileDateTime } from '../chile-time';
import { applyFault, xmlReply } from '../http';
import { isFinal, uploadState, ESTADO_GLOSA } from '../progress';
import { joinRut } from '../rut';
import { checkToken, authorize, type Sim } from '../sim';
import { elements, rpcParam, rpcResponse, siiRespuesta } from '../soap';
import { REAL_HOST, type SiiEnv } from '../types';
import { noSuchOperation, soapCall } from './auth';

const EST_UP_PARAMS = ['RutCompania', 'DvCompania', 'TrackId', 'Token'];
const EST_DTE_PARAMS = [
  'RutConsultante',
  'DvConsultante',
  'RutCompania',
  'DvCompania',
  'RutReceptor',
  'DvReceptor',
  'TipoDte',
  'FolioDte',
  'FechaEmisionDte',
  'MontoDte',
  'Token',
];

let atencion = 1000;
function numAtencion(now: number): string {
  return `${atencion++} ( ${chileDateTime(now).replace(/-/g, '/')})`;
}

function tokenEstado(reason: 'missing' | 'unknown' | 'expired'): [string, string] {
  return reason === 'expired' ? ['002', 'TOKEN INACTIVO'] : ['003', 'TOKEN NO EXISTE'];
}

export async function queryEstUp(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'getEstUp')) return;
  const call = await soapCall(ctx);
  if (!call) return;
  if (call.method !== 'getEstUp') return noSuchOperation(ctx, call.method);
  const p = (n: string) => (rpcParam(call, EST_UP_PARAMS, n) ?? '').trim();
  const now = sim.state.now();
  const trackId = p('TrackId');
  const answer = (hdr: [string, string | number][], body?: string) =>
    xmlReply(
      ctx,
      rpcResponse(
        `https://${REAL_HOST[env]}/DTEWS/QueryEstUp.jws`,
        'getEstUp',
        siiRespuesta(elements([['TRACKID', trackId], ...hdr, ['NUM_ATENCION', numAtencion(now)]]), body),
      ),
    );
  const e = sim.state.env[env];
  const token = checkToken(e, p('Token'), now);
  if (!token.ok) {
    const [estado, glosa] = tokenEstado(token.reason);
    return answer([
      ['ESTADO', estado],
      ['GLOSA', glosa],
    ]);
  }
  const company = joinRut(p('RutCompania'), p('DvCompania'));
  if (!company)
    return answer([
      ['ESTADO', '-10'],
      ['GLOSA', 'Error en Validacion de RUT de la Empresa'],
    ]);
  if (!authorize(sim, e, token.token.rut, company))
    return answer([
      ['ESTADO', '-6'],
      ['GLOSA', 'Usuario no Autorizado'],
    ]);
  const u = e.uploads.get(trackId) ?? e.uploads.get(trackId.padStart(10, '0'));
  const notYet = () =>
    answer([
      ['ESTADO', '-11'],
      ['GLOSA', 'Error: Track Id no registrado o no pertenece a la empresa'],
      ['ERR_CODE', 1],
      ['SQL_CODE', 0],
      ['SRV_CODE', 0],
    ]);
  if (!u || u.rutCompany !== company) return notYet();
  const estado = uploadState(u, now, sim.options.timings);
  if (estado === '-11') return notYet();
  const hdr: [string, string][] = [
    ['ESTADO', estado],
    ['GLOSA', ESTADO_GLOSA[estado] ?? estado],
  ];
  if (estado !== 'EPR') return answer(hdr);
  const byType = new Map<
    number,
    { informados: number; aceptados: number; rechazados: number; reparos: number }
  >();
  for (const d of u.documents) {
    const s = byType.get(d.tipoDte) ?? { informados: 0, aceptados: 0, rechazados: 0, reparos: 0 };
    s.informados++;
    if (d.result === 'RECHAZADO') s.rechazados++;
    else s.aceptados++;
    if (d.result === 'REPARO') s.reparos++;
    byType.set(d.tipoDte, s);
  }
  const body = [...byType.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([tipo, s]) =>
      elements([
        ['TIPO_DOCTO', tipo],
        ['INFORMADOS', s.informados],
        ['ACEPTADOS', s.aceptados],
        ['RECHAZADOS', s.rechazados],
        ['REPAROS', s.reparos],
      ]),
    )
    .join('');
  answer(hdr, body);
}

/**
 * ESTADO of one document: DOK (ERR_CODE 0) received and the data match, with GLOSA_ESTADO
 * "DTE Recibido" or "RPR - Aceptado con Reparos"; DNK (1) received but the receiver, date or
 * amount differ; FAU (3) not received — also for a document the SII rejected (GLOSA_ESTADO
 * "RCH - DTE Rechazado") or whose send is still being processed; EMP (6) the company is not an
 * electronic issuer. Token errors: 003 / 002.
 */
export async function queryEstDte(sim: Sim, env: SiiEnv, ctx: Context): Promise<void> {
  if (await applyFault(ctx, sim.state, env, 'getEstDte')) return;
  const call = await soapCall(ctx);
  if (!call) return;
  if (call.method !== 'getEstDte') return noSuchOperation(ctx, call.method);
  const p = (n: string) => (rpcParam(call, EST_DTE_PARAMS, n) ?? '').trim();
  const now = sim.state.now();
  const answer = (estado: string, glosaEstado: string, errCode: number | string, glosaErr: string) =>
    xmlReply(
      ctx,
      rpcResponse(
        `https://${REAL_HOST[env]}/DTEWS/QueryEstDte.jws`,
        'getEstDte',
        siiRespuesta(
          elements([
            ['ESTADO', estado],
            ['GLOSA_ESTADO', glosaEstado],
            ['ERR_CODE', errCode],
            ['GLOSA_ERR', glosaErr],
            ['NUM_ATENCION', numAtencion(now)],
          ]),
        ),
      ),
    );
  const e = sim.state.env[env];
  const token = checkToken(e, p('Token'), now);
  if (!token.ok) {
    const [estado, glosa] = tokenEstado(token.reason);
    return answer(estado, glosa, estado, glosa);
  }
  const consultante = joinRut(p('RutConsultante'), p('DvConsultante'));
  const company = joinRut(p('RutCompania'), p('DvCompania'));
  const receptor = joinRut(p('RutReceptor'), p('DvReceptor'));
  const tipo = Number(p('TipoDte'));
  const folio = Number(p('FolioDte'));
  const fecha = /^(\d{2})(\d{2})(\d{4})$/.exec(p('FechaEmisionDte'));
  const monto = p('MontoDte');
  if (
    !consultante ||
    !company ||
    !receptor ||
    !Number.isInteger(tipo) ||
    !Number.isInteger(folio) ||
    !fecha ||
    !/^\d+$/.test(monto)
  )
    return answer('-1', 'Error: parametros de entrada incorrectos', -1, 'Error en los parametros de entrada');
  if (consultante !== token.token.rut)
    return answer(
      '-3',
      'Error: RUT consultante no corresponde al usuario autenticado',
      -3,
      'Error en autenticacion',
    );
  if (!e.companies.has(company) && !sim.options.autoEnrol)
    return answer(
      'EMP',
      'Empresa no autorizada a Emitir Documentos Tributarios Electronicos',
      6,
      'Empresa no autorizada',
    );
  const notReceived = (glosaEstado = 'DTE No Recibido') =>
    answer('FAU', glosaEstado, 3, 'Documento No Recibido por el SII');
  const d = e.documents.get(e.documentKey(company, tipo, folio));
  if (!d) return notReceived();
  const u = e.uploads.get(d.trackId);
  if (!u || !isFinal(u, now, sim.options.timings)) return notReceived();
  if (d.result === 'RECHAZADO') return notReceived('RCH - DTE Rechazado');
  const fchEmis = `${fecha[3]}-${fecha[2]}-${fecha[1]}`;
  if (d.rutReceptor !== receptor || d.fchEmis !== fchEmis || d.mntTotal !== Number(monto))
    return answer(
      'DNK',
      'DTE Recibido',
      1,
      'Documento Recibido por el SII pero Datos NO Coinciden con los registrados',
    );
  if (d.result === 'REPARO')
    return answer(
      'DOK',
      'RPR - Aceptado con Reparos',
      0,
      'Documento Recibido por el SII. Datos Coinciden con los Registrados',
    );
  answer('DOK', 'DTE Recibido', 0, 'Documento Recibido por el SII. Datos Coinciden con los Registrados');
}
