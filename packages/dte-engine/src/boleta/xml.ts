import { ServiceError } from '@dte/error-catalog';

import type { Caf } from '../caf';
import { assertCafNotExpired } from '../caf';
import type { SigningCredential } from '../crypto/certificate';
import { signingMaterial } from '../crypto/keys';
import { normalizeRut } from '../crypto/rut';
import { buildSignature } from '../crypto/xmldsig';
import { assertCredentialValidAt } from '../credential-checks';
import type { DteDocument } from '../model';
import { signTed } from '../ted';
import { documentId, SII_NS } from '../xml/dte-xml';
import { el, siiTimestamp } from '../xml/text';
import type { BoletaDocument } from './document';

/** Element order of BOLETADefType (EnvioBOLETA_v11.xsd), limited to what BoletaDocument carries. */
const ORDER = {
  IdDoc: ['TipoDTE', 'Folio', 'FchEmis', 'IndServicio'],
  Emisor: ['RUTEmisor', 'RznSocEmisor', 'GiroEmisor', 'DirOrigen', 'CmnaOrigen'],
  Receptor: ['RUTRecep', 'RznSocRecep'],
  Totales: ['MntNeto', 'MntExe', 'IVA', 'MntTotal'],
  Detalle: ['NroLinDet', 'IndExe', 'NmbItem', 'QtyItem', 'PrcItem', 'MontoItem'],
} as const;

function group(name: keyof typeof ORDER, obj: object): string {
  const values = obj as Record<string, string | number | undefined>;
  for (const k of Object.keys(values))
    if (!(ORDER[name] as readonly string[]).includes(k) && values[k] !== undefined)
      throw new ServiceError('validation_failed', `${name}/${k} is not part of a boleta`, {
        issues: [{ path: `${name}/${k}`, message: 'not part of EnvioBOLETA_v11.xsd BOLETADefType' }],
      });
  let out = `<${name}>`;
  for (const k of ORDER[name]) {
    const v = values[k];
    if (v !== undefined) out += el(k, v);
  }
  return `${out}</${name}>`;
}

/** Encabezado and Detalle in schema order (TED and TmstFirma are appended when stamping). */
export function writeBoletaBody(doc: BoletaDocument): string {
  const e = doc.Encabezado;
  return (
    '<Encabezado>' +
    group('IdDoc', e.IdDoc) +
    group('Emisor', e.Emisor) +
    group('Receptor', e.Receptor) +
    group('Totales', e.Totales) +
    '</Encabezado>' +
    doc.Detalle.map((d) => group('Detalle', d)).join('')
  );
}

/** The fields of the TED's DD, read from a boleta (RSR falls back to the RUT when anonymous). */
function tedView(doc: BoletaDocument): DteDocument {
  const e = doc.Encabezado;
  return {
    Encabezado: {
      IdDoc: { TipoDTE: e.IdDoc.TipoDTE, Folio: e.IdDoc.Folio, FchEmis: e.IdDoc.FchEmis },
      Emisor: { RUTEmisor: e.Emisor.RUTEmisor, RznSoc: '', GiroEmis: '', Acteco: [] },
      Receptor: { RUTRecep: e.Receptor.RUTRecep, RznSocRecep: e.Receptor.RznSocRecep ?? '' },
      Totales: { MntTotal: e.Totales.MntTotal },
    },
    Detalle: doc.Detalle.map((d) => ({ NroLinDet: d.NroLinDet, NmbItem: d.NmbItem, MontoItem: d.MontoItem })),
  };
}

/**
 * Stamps (TED with the CAF of type 39/41) and signs one boleta: the signed
 * `<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0">` text, signed as a standalone document
 * like every DTE (PROTOCOL.md §9), ready to go unchanged into an EnvioBOLETA.
 */
export function stampAndSignBoleta(
  doc: BoletaDocument,
  opts: { caf: Caf; credential: SigningCredential; timestamp: Date },
): string {
  const { caf, credential, timestamp } = opts;
  const { TipoDTE: tipo, Folio: folio } = doc.Encabezado.IdDoc;
  if (caf.tipoDte !== tipo)
    throw new ServiceError('caf.wrong_tipo', `the CAF is for type ${caf.tipoDte}, the boleta is ${tipo}`, {
      detail: { tipoDte: caf.tipoDte, expected: tipo },
    });
  if (!Number.isInteger(folio) || folio < caf.desde || folio > caf.hasta)
    throw new ServiceError(
      'caf_not_found',
      `folio ${folio} is outside the CAF range ${caf.desde}-${caf.hasta}`,
      {
        detail: { tipoDte: tipo, folio, desde: caf.desde, hasta: caf.hasta },
      },
    );
  if (normalizeRut(doc.Encabezado.Emisor.RUTEmisor) !== caf.rutEmisor)
    throw new ServiceError('emisor_rut_mismatch', `the boleta's issuer is not the CAF's ${caf.rutEmisor}`, {
      detail: { rutEmisor: doc.Encabezado.Emisor.RUTEmisor, cafRutEmisor: caf.rutEmisor },
    });
  assertCafNotExpired(caf, timestamp);
  assertCredentialValidAt(credential, timestamp);
  const id = documentId(tipo, folio);
  const content =
    writeBoletaBody(doc) + signTed(tedView(doc), caf, timestamp) + el('TmstFirma', siiTimestamp(timestamp));
  const canonical = `<Documento xmlns="${SII_NS}" ID="${id}">${content}</Documento>`;
  const signature = buildSignature(canonical, `#${id}`, signingMaterial(credential));
  return `<DTE xmlns="${SII_NS}" version="1.0"><Documento ID="${id}">${content}</Documento>${signature}</DTE>`;
}
