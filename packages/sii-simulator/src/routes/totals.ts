/**
 * Net, exempt and VAT amounts of each DTE of an envelope, for the RCV. This is reading values,
 * not checking them (the checks are @dte/engine's): key `${tipo}|${folio}`.
 */
import type { Element } from '@xmldom/xmldom';
import type { ParsedEnvio } from '../engine';
import { childElements, descendants, findDescendant } from '../xml';

/** The DTE elements of an envelope as readEnvio read it: its standalone trees, else the whole tree's. */
export function dteElements(parsed: ParsedEnvio): Element[] {
  return parsed.dtes ? parsed.dtes.map((d) => d.root) : descendants(parsed.document, 'DTE');
}

/** from the envelope as the upload route read it (readEnvio), read once for every use */
export function readTotals(
  parsed: ParsedEnvio,
): Map<string, { mntNeto?: number; mntExe?: number; iva?: number }> {
  const out = new Map<string, { mntNeto?: number; mntExe?: number; iva?: number }>();
  for (const dte of dteElements(parsed)) {
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
