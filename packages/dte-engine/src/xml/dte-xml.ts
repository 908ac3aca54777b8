import { ServiceError } from '@dte/error-catalog';

import { DteDocument, EXPORT_TYPES, TipoDte } from '../model';
import { DOCUMENTO_ORDER, EXPORTACIONES_ORDER, OrderSpec } from './schema-order';
import { el } from './text';

export const SII_NS = 'http://www.sii.cl/SiiDte';

/** `<Documento>` for every type but exports, which use `<Exportaciones>` (DTE_v10.xsd choice). */
export function documentElementName(tipo: TipoDte): 'Documento' | 'Exportaciones' {
  return EXPORT_TYPES.includes(tipo) ? 'Exportaciones' : 'Documento';
}

/** The ID the SII's own example uses: F<folio>T<tipo>. */
export function documentId(tipo: number, folio: number): string {
  return `F${folio}T${tipo}`;
}

/**
 * The children of Documento/Exportaciones that come from the model (Encabezado, Detalle,
 * DscRcgGlobal, Referencia), in schema order and canonical form; the TED and TmstFirma are
 * appended by the stamping step.
 */
export function writeDocumentBody(doc: DteDocument): string {
  const tipo = doc.Encabezado.IdDoc.TipoDTE;
  const order = documentElementName(tipo) === 'Exportaciones' ? EXPORTACIONES_ORDER : DOCUMENTO_ORDER;
  const out: string[] = [];
  writeChildren(out, doc as unknown as Record<string, unknown>, order, documentElementName(tipo), tipo);
  return out.join('');
}

function writeChildren(
  out: string[],
  obj: Record<string, unknown>,
  spec: OrderSpec,
  path: string,
  tipo: number,
): void {
  for (const key of Object.keys(obj)) {
    if (!(key in spec) && obj[key] !== undefined) {
      throw new ServiceError(
        'validation_failed',
        `${path}/${key} is not allowed in a type ${tipo} document`,
        {
          issues: [{ path: `${path}/${key}`, message: `not part of DTE_v10.xsd for type ${tipo}` }],
        },
      );
    }
  }
  for (const name of Object.keys(spec)) {
    const value = obj[name];
    if (value === undefined || value === null) continue;
    const childSpec = spec[name] ?? null;
    const items = Array.isArray(value) ? value : [value];
    for (const item of items) writeElement(out, name, item, childSpec, `${path}/${name}`, tipo);
  }
}

function writeElement(
  out: string[],
  name: string,
  value: unknown,
  spec: OrderSpec | null,
  path: string,
  tipo: number,
): void {
  if (spec === null) {
    if (typeof value !== 'string' && typeof value !== 'number') {
      throw new ServiceError('validation_failed', `${path} must be a string or a number`, {
        issues: [{ path, message: 'must be a string or a number' }],
      });
    }
    out.push(el(name, value));
    return;
  }
  if (typeof value !== 'object' || value === null) {
    throw new ServiceError('validation_failed', `${path} must be an object`, {
      issues: [{ path, message: 'must be an object' }],
    });
  }
  out.push(`<${name}>`);
  writeChildren(out, value as Record<string, unknown>, spec, path, tipo);
  out.push(`</${name}>`);
}
