/** The types the printed form knows, with the name printed in the emitter box. */
export const DOCUMENT_NAMES: Readonly<Record<number, string>> = {
  33: 'FACTURA ELECTRÓNICA',
  34: 'FACTURA NO AFECTA O EXENTA ELECTRÓNICA',
  46: 'FACTURA DE COMPRA ELECTRÓNICA',
  52: 'GUÍA DE DESPACHO ELECTRÓNICA',
  56: 'NOTA DE DÉBITO ELECTRÓNICA',
  61: 'NOTA DE CRÉDITO ELECTRÓNICA',
  110: 'FACTURA DE EXPORTACIÓN ELECTRÓNICA',
  111: 'NOTA DE DÉBITO DE EXPORTACIÓN ELECTRÓNICA',
  112: 'NOTA DE CRÉDITO DE EXPORTACIÓN ELECTRÓNICA',
  39: 'BOLETA ELECTRÓNICA',
  41: 'BOLETA NO AFECTA O EXENTA ELECTRÓNICA',
};

export const PRINTABLE_TIPOS = Object.keys(DOCUMENT_NAMES).map(Number);

/** Names of referenced document types (TpoDocRef), for the references table. */
export const REFERENCE_NAMES: Readonly<Record<string, string>> = {
  ...Object.fromEntries(Object.entries(DOCUMENT_NAMES).map(([k, v]) => [k, v])),
  '30': 'FACTURA',
  '32': 'FACTURA NO AFECTA O EXENTA',
  '35': 'BOLETA',
  '39': 'BOLETA ELECTRÓNICA',
  '41': 'BOLETA EXENTA ELECTRÓNICA',
  '50': 'GUÍA DE DESPACHO',
  '55': 'NOTA DE DÉBITO',
  '60': 'NOTA DE CRÉDITO',
  '801': 'ORDEN DE COMPRA',
  '802': 'NOTA DE PEDIDO',
  '803': 'CONTRATO',
  HES: 'HOJA DE ENTRADA DE SERVICIOS',
};

export const COD_REF_NAMES: Readonly<Record<string, string>> = {
  '1': 'Anula documento de referencia',
  '2': 'Corrige texto del documento de referencia',
  '3': 'Corrige montos',
};

export const FORMA_PAGO_NAMES: Readonly<Record<number, string>> = {
  1: 'Contado',
  2: 'Crédito',
  3: 'Sin costo',
};

export const TRASLADO_NAMES: Readonly<Record<string, string>> = {
  '1': 'Operación constituye venta',
  '2': 'Ventas por efectuar',
  '3': 'Consignaciones',
  '4': 'Entrega gratuita',
  '5': 'Traslados internos',
  '6': 'Otros traslados no venta',
  '7': 'Guía de devolución',
  '8': 'Traslado para exportación (no venta)',
  '9': 'Venta para exportación',
};

/**
 * Types with a CEDIBLE copy (assignable under Ley 19.983: facturas 33, 34, the liquidación-factura
 * 43, the factura de compra 46; the guía 52 travels with its factura), and the label of that copy.
 * The same list as LibreDTE's cedible types.
 */
export const CEDIBLE_LABEL: Readonly<Record<number, string>> = {
  33: 'CEDIBLE',
  34: 'CEDIBLE',
  43: 'CEDIBLE',
  46: 'CEDIBLE',
  52: 'CEDIBLE CON SU FACTURA',
};

/** The types above, named for messages (`33, 34, 43, 46 and 52`). */
export const CEDIBLE_TIPOS_TEXT = (() => {
  const t = Object.keys(CEDIBLE_LABEL);
  return `${t.slice(0, -1).join(', ')} and ${t[t.length - 1]}`;
})();

/** Draft watermark of a preview. */
export const DRAFT_LABEL = 'BORRADOR — SIN VALIDEZ TRIBUTARIA';

/** The legal text of the receptor's acuse de recibo on a CEDIBLE copy (Ley 19.983, art. 4, letters b and c). */
export const ACUSE_LEGAL_TEXT =
  'El acuse de recibo que se declara en este acto, de acuerdo a lo dispuesto en la letra b) del Art. 4°, ' +
  'y la letra c) del Art. 5° de la Ley 19.983, acredita que la entrega de mercaderías o servicio(s) ' +
  'prestado(s) ha(n) sido recibido(s).';
