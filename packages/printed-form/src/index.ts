/**
 * @dte/printed-form: the representación impresa of a DTE (pdfkit + bwip-js) from its signed XML,
 * with the PDF417 timbre of the TED as signed; draft previews from the engine's document model;
 * a ZIP helper for the sample prints.
 */
import { modelFromDocument, modelFromSignedXml } from './model';
import { renderPrintedForm, type PrintOptions } from './render';

export { modelFromSignedXml, modelFromDocument, tedOf } from './model';
export type { PrintModel } from './model';
export { renderPrintedForm, formatAmount, formatRut, MAX_PRINTED_ITEMS } from './render';
export type { PrintCopy, PrintLayout, PrintOptions } from './render';
export { timbreSymbol, drawTimbre, TIMBRE_RULES } from './timbre';
export type { TimbreSymbol } from './timbre';
export {
  DOCUMENT_NAMES,
  PRINTABLE_TIPOS,
  CEDIBLE_LABEL,
  CEDIBLE_TIPOS_TEXT,
  DRAFT_LABEL,
  ACUSE_LEGAL_TEXT,
} from './names';
export { zipFiles } from './zip';

/** The printed form of a signed DTE as stored (the XML is the source of truth). */
export function renderSignedDte(signedXml: string, opts: Omit<PrintOptions, 'draft'>): Promise<Buffer> {
  return renderPrintedForm(modelFromSignedXml(signedXml), { ...opts, draft: false });
}

/** A draft of a document built by the engine (preview): no folio, no timbre, marked BORRADOR. */
export function renderDraft(document: unknown, opts: Omit<PrintOptions, 'draft' | 'copy'>): Promise<Buffer> {
  return renderPrintedForm(modelFromDocument(document), { ...opts, draft: true, copy: 'original' });
}
