import {
  stampAndSignBoleta,
  stampAndSignDte,
  type BoletaDocument,
  type DteDocument,
  type StampAndSignOptions,
} from '@dte/engine';

/** Boletas (39, 41) follow EnvioBOLETA_v11.xsd's own document; every other type DTE_v10.xsd's. */
export const BOLETA_TIPOS: readonly number[] = [39, 41];

/** Stamps and signs a stored document with the writer of its type (the one dispatch by tipo_dte). */
export function signStoredDocument(tipo: number, document: unknown, opts: StampAndSignOptions): string {
  return BOLETA_TIPOS.includes(tipo)
    ? stampAndSignBoleta(document as BoletaDocument, opts)
    : stampAndSignDte(document as DteDocument, opts);
}
