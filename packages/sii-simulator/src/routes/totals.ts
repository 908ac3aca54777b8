/**
 * Net, exempt and VAT amounts of each DTE of an envelope, for the RCV. This is reading values,
 * not checking them (the checks are @dte/engine's): key `${tipo}|${folio}`.
 */
import { childElements, descendants, findDescendant } from '../xml';
import type { Document, Element } from '@xmldom/xmldom';

/** from the envelope as the upload route parsed it (parseXml), read once for every use */
export function readTotals(doc: Document): Map<string, { mntNeto?: number; mntExe?: number; iva?: number }> {
  const out = new Map<string, { mntNeto?: number; mntExe?: number; iva?: number }>();
  for (const dte of descendants(doc, 'DTE')) {
    const idDoc = findDescendant(dte, 'IdDoc');
    const totales = findDescendant(dte, 'Totales');
    if (!idDoc || !totales) continue;
    const num = (parent: Element, name: string) => {
      const el = childElements(parent).find((e) => e.localName === name);
      return el ? Number((el.textContent ?? '').trim()) : undefined;
    };
    out.set(`${num(idDoc, 'TipoDTE')}|${num(idDoc, 'Folio')}`, {
      mntNeto: num(totales, 'MntNeto'),
      mntExe: num(totales, 'MntExe'),
      iva: num(totales, 'IVA'),
    });
  }
  return out;
}
