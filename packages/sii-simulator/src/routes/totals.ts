/**
 * Net, exempt and VAT amounts of each DTE of an envelope, for the RCV. This is reading values,
 * not checking them (the checks are @dte/engine's): key `${tipo}|${folio}`.
 */
import { childElements, findDescendant, parseXml } from '../xml';
import type { Element } from '@xmldom/xmldom';

export function readTotals(xml: string): Map<string, { mntNeto?: number; mntExe?: number; iva?: number }> {
  const out = new Map<string, { mntNeto?: number; mntExe?: number; iva?: number }>();
  const doc = parseXml(xml);
  const dtes = doc.getElementsByTagNameNS('*', 'DTE');
  for (let i = 0; i < dtes.length; i++) {
    const dte = dtes[i] as Element;
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
