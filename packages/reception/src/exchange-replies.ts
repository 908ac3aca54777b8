/**
 * The exchange replies a receiver owes the sender of an EnvioDTE (the SII's "intercambio entre
 * contribuyentes", Formato DTE §"Respuesta de intercambio"; schemas RespuestaEnvioDTE_v10.xsd,
 * EnvioRecibos_v10.xsd and Recibos_v10.xsd in ../shared/sii/schemas):
 *
 * - `buildRespuestaRecepcion`: RespuestaDTE with one RecepcionEnvio: the envelope's reception
 *   (EstadoRecepEnv) and one RecepcionDTE per document it held, each with its own state
 *   (EstadoRecepDTE: 0 received, 1 signature, 2 RUT emisor, 3 RUT receptor, 4 repeated, 99 other)
 *   so a partly bad envelope is answered document by document;
 * - `buildRespuestaResultado`: RespuestaDTE with one ResultadoDTE per document: the commercial
 *   approval (EstadoDTE 0 accepted, 1 accepted with discrepancies, 2 rejected);
 * - `buildEnvioRecibos`: EnvioRecibos with one Recibo per document, the Ley 19.983 receipt of
 *   goods or services (its Declaracion is the text the schema fixes).
 *
 * Every one is signed with the receiving company's certificate (the engine's XML-DSig: each
 * Recibo's DocumentoRecibo, then the SetRecibos; the Resultado of a RespuestaDTE) and written as
 * ISO-8859-1 bytes, the encoding it declares.
 */
import {
  signReferencedElement,
  siiTimestamp,
  SII_NS,
  xmlElement as el,
  type SigningCredential,
} from '@dte/engine';

import { normRut } from './intercambio';

/** The identity of a document as the replies name it. */
export interface ReplyDocumentRef {
  tipoDte: number;
  folio: number;
  /** AAAA-MM-DD */
  fchEmis: string;
  rutEmisor: string;
  rutReceptor: string;
  mntTotal: number;
}

/** EstadoRecepDTE of RespuestaEnvioDTE_v10.xsd */
export const ESTADO_RECEP_DTE = {
  0: 'DTE Recibido OK',
  1: 'DTE No Recibido - Error de Firma',
  2: 'DTE No Recibido - Error en RUT Emisor',
  3: 'DTE No Recibido - Error en RUT Receptor',
  4: 'DTE No Recibido - DTE Repetido',
  99: 'DTE No Recibido - Otros',
} as const;
export type EstadoRecepDte = keyof typeof ESTADO_RECEP_DTE;

/** EstadoRecepEnv of RespuestaEnvioDTE_v10.xsd */
export const ESTADO_RECEP_ENV = {
  0: 'Envio Recibido Conforme',
  1: 'Envio Rechazado - Error de Schema',
  2: 'Envio Rechazado - Error de Firma',
  3: 'Envio Rechazado - RUT Receptor No Corresponde',
  90: 'Envio Rechazado - Archivo Repetido',
  91: 'Envio Rechazado - Archivo Ilegible',
  99: 'Envio Rechazado - Otros',
} as const;
export type EstadoRecepEnv = keyof typeof ESTADO_RECEP_ENV;

/** EstadoDTE (commercial approval) of RespuestaEnvioDTE_v10.xsd */
export const ESTADO_RESULTADO_DTE = {
  0: 'DTE Aceptado OK',
  1: 'DTE Aceptado con Discrepancias',
  2: 'DTE Rechazado',
} as const;
export type EstadoResultadoDte = keyof typeof ESTADO_RESULTADO_DTE;

/** The fixed Declaracion of Recibos_v10.xsd (Ley 19.983, art. 4 b and art. 5 c). */
export const DECLARACION_RECIBO =
  'El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4, y la letra c) del Art. 5 de la Ley 19.983, acredita que la entrega de mercaderias o servicio(s) prestado(s) ha(n) sido recibido(s).';

export interface ReplySigner {
  /** the receiving company (RutResponde) */
  rutResponde: string;
  /** the supplier (RutRecibe) */
  rutRecibe: string;
  credential: SigningCredential;
  timestamp: Date;
  contacto?: { nombre?: string; fono?: string; mail?: string };
}

export interface RecepcionEnvioInput {
  /** IdRespuesta: a positive number of at most 10 digits, unique per reply of the company */
  idRespuesta: number;
  /** NmbEnvio: the file's name (at most 80 characters) */
  nmbEnvio: string;
  fchRecep: Date;
  /** CodEnvio: the receiver's number for the envelope (at most 10 digits) */
  codEnvio: number;
  /** EnvioDTEID: the SetDTE's ID attribute */
  envioDteId: string;
  /** the envelope signature's DigestValue */
  digest?: string;
  rutEmisor: string;
  rutReceptor: string;
  estado: EstadoRecepEnv;
  glosa?: string;
  documentos: (ReplyDocumentRef & { estado: EstadoRecepDte; glosa?: string })[];
}

export interface ResultadoInput {
  idRespuesta: number;
  documentos: (ReplyDocumentRef & {
    codEnvio: number;
    estado: EstadoResultadoDte;
    glosa?: string;
    /** CodRchDsc: a negative code of at most 3 digits, the reason of a rejection/discrepancy */
    codRchDsc?: number;
  })[];
}

export interface ReciboInput extends ReplyDocumentRef {
  /** where the goods or services were received (at most 80 characters) */
  recinto: string;
}

const XML_DECL = '<?xml version="1.0" encoding="ISO-8859-1"?>\n';

function rut(value: string, what: string): string {
  const r = normRut(value);
  if (!/^\d{1,8}-[\dK]$/.test(r)) throw new Error(`${what} ${value} is not a RUT`);
  return r;
}

function cut(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}

function positive(n: number, digits: number, what: string): number {
  if (!Number.isInteger(n) || n < 1 || n >= 10 ** digits)
    throw new Error(`${what} must be a positive integer of at most ${digits} digits`);
  return n;
}

function caratulaContacto(s: ReplySigner): string {
  const c = s.contacto ?? {};
  return (
    (c.nombre ? el('NmbContacto', cut(c.nombre, 40)) : '') +
    (c.fono ? el('FonoContacto', cut(c.fono, 40)) : '') +
    (c.mail ? el('MailContacto', cut(c.mail, 80)) : '')
  );
}

function docRef(d: ReplyDocumentRef, recep: 'RUTRecep'): string {
  return (
    el('TipoDTE', d.tipoDte) +
    el('Folio', d.folio) +
    el('FchEmis', d.fchEmis) +
    el('RUTEmisor', rut(d.rutEmisor, 'RUTEmisor')) +
    el(recep, rut(d.rutReceptor, recep)) +
    el('MntTotal', d.mntTotal)
  );
}

/** RespuestaDTE around one Resultado (ID `RESP<id>`), signed over the Resultado. */
function signedRespuesta(resultadoInner: string, idRespuesta: number, s: ReplySigner): Buffer {
  const id = `RESP${idRespuesta}`;
  const root = `<RespuestaDTE xmlns="${SII_NS}" version="1.0">`;
  const resultado = `<Resultado ID="${id}">${resultadoInner}</Resultado>`;
  const signature = signReferencedElement(
    `${root}${resultado}</RespuestaDTE>`,
    id,
    s.credential,
    s.timestamp,
  );
  return Buffer.from(`${XML_DECL}${root}${resultado}${signature}</RespuestaDTE>`, 'latin1');
}

function caratula(s: ReplySigner, idRespuesta: number, nroDetalles: number): string {
  return (
    '<Caratula version="1.0">' +
    el('RutResponde', rut(s.rutResponde, 'RutResponde')) +
    el('RutRecibe', rut(s.rutRecibe, 'RutRecibe')) +
    el('IdRespuesta', positive(idRespuesta, 10, 'IdRespuesta')) +
    el('NroDetalles', positive(nroDetalles, 4, 'NroDetalles')) +
    caratulaContacto(s) +
    el('TmstFirmaResp', siiTimestamp(s.timestamp)) +
    '</Caratula>'
  );
}

/** RespuestaDTE / RecepcionEnvio: the envelope's reception and each document's. */
export function buildRespuestaRecepcion(input: RecepcionEnvioInput, s: ReplySigner): Buffer {
  const docs = input.documentos
    .map(
      (d) =>
        '<RecepcionDTE>' +
        docRef(d, 'RUTRecep') +
        el('EstadoRecepDTE', d.estado) +
        el('RecepDTEGlosa', cut(d.glosa ?? ESTADO_RECEP_DTE[d.estado], 256)) +
        '</RecepcionDTE>',
    )
    .join('');
  const envio =
    '<RecepcionEnvio>' +
    el('NmbEnvio', cut(input.nmbEnvio, 80)) +
    el('FchRecep', siiTimestamp(input.fchRecep)) +
    el('CodEnvio', positive(input.codEnvio, 10, 'CodEnvio')) +
    el('EnvioDTEID', cut(input.envioDteId, 80)) +
    (input.digest ? el('Digest', input.digest) : '') +
    el('RutEmisor', rut(input.rutEmisor, 'RutEmisor')) +
    el('RutReceptor', rut(input.rutReceptor, 'RutReceptor')) +
    el('EstadoRecepEnv', input.estado) +
    el('RecepEnvGlosa', cut(input.glosa ?? ESTADO_RECEP_ENV[input.estado], 256)) +
    (input.documentos.length > 0 ? el('NroDTE', positive(input.documentos.length, 4, 'NroDTE')) : '') +
    docs +
    '</RecepcionEnvio>';
  return signedRespuesta(caratula(s, input.idRespuesta, 1) + envio, input.idRespuesta, s);
}

/** RespuestaDTE / ResultadoDTE: the commercial approval of each document. */
export function buildRespuestaResultado(input: ResultadoInput, s: ReplySigner): Buffer {
  if (input.documentos.length === 0) throw new Error('a ResultadoDTE answers at least one document');
  const docs = input.documentos
    .map((d) => {
      if (
        d.codRchDsc !== undefined &&
        !(Number.isInteger(d.codRchDsc) && d.codRchDsc < 0 && d.codRchDsc > -1000)
      )
        throw new Error('CodRchDsc must be a negative integer of at most 3 digits');
      return (
        '<ResultadoDTE>' +
        docRef(d, 'RUTRecep') +
        el('CodEnvio', positive(d.codEnvio, 10, 'CodEnvio')) +
        el('EstadoDTE', d.estado) +
        el('EstadoDTEGlosa', cut(d.glosa ?? ESTADO_RESULTADO_DTE[d.estado], 256)) +
        (d.codRchDsc !== undefined ? el('CodRchDsc', d.codRchDsc) : '') +
        '</ResultadoDTE>'
      );
    })
    .join('');
  return signedRespuesta(
    caratula(s, input.idRespuesta, input.documentos.length) + docs,
    input.idRespuesta,
    s,
  );
}

/**
 * EnvioRecibos: one Recibo per document (each DocumentoRecibo signed), then the SetRecibos
 * signed. `setId` names the SetRecibos (an XML ID).
 */
export function buildEnvioRecibos(recibos: ReciboInput[], s: ReplySigner, setId = 'SetRecibos'): Buffer {
  if (recibos.length === 0) throw new Error('an EnvioRecibos holds at least one Recibo');
  const root = `<EnvioRecibos xmlns="${SII_NS}" version="1.0">`;
  const signedRecibos = recibos.map((r, i) => {
    const id = `R${i + 1}T${r.tipoDte}F${r.folio}`;
    const reciboStart = `<Recibo xmlns="${SII_NS}" version="1.0">`;
    const documento =
      `<DocumentoRecibo ID="${id}">` +
      el('TipoDoc', r.tipoDte) +
      el('Folio', r.folio) +
      el('FchEmis', r.fchEmis) +
      el('RUTEmisor', rut(r.rutEmisor, 'RUTEmisor')) +
      el('RUTRecep', rut(r.rutReceptor, 'RUTRecep')) +
      el('MntTotal', r.mntTotal) +
      el('Recinto', cut(r.recinto, 80)) +
      el('RutFirma', s.credential.info.rut) +
      el('Declaracion', DECLARACION_RECIBO) +
      el('TmstFirmaRecibo', siiTimestamp(s.timestamp)) +
      '</DocumentoRecibo>';
    const signature = signReferencedElement(
      `${reciboStart}${documento}</Recibo>`,
      id,
      s.credential,
      s.timestamp,
    );
    return `${reciboStart}${documento}${signature}</Recibo>`;
  });
  const caratulaRecibos =
    '<Caratula version="1.0">' +
    el('RutResponde', rut(s.rutResponde, 'RutResponde')) +
    el('RutRecibe', rut(s.rutRecibe, 'RutRecibe')) +
    caratulaContacto(s) +
    el('TmstFirmaEnv', siiTimestamp(s.timestamp)) +
    '</Caratula>';
  const set = `<SetRecibos ID="${setId}">${caratulaRecibos}${signedRecibos.join('')}</SetRecibos>`;
  const signature = signReferencedElement(`${root}${set}</EnvioRecibos>`, setId, s.credential, s.timestamp);
  return Buffer.from(`${XML_DECL}${root}${set}${signature}</EnvioRecibos>`, 'latin1');
}
