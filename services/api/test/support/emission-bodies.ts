/**
 * Emission bodies of the tests: a valid POST /dtes body of every supported type and a POST /boletas
 * body, dated today in America/Santiago. Plain data (no api module), so the process-level harness
 * (test/support/pipeline-harness.ts) sends the same bodies as the in-process tests.
 */
import { santiagoDate } from '@dte/engine';

export const today = () => santiagoDate(new Date());

const RECEPTOR = {
  rut: '77777777-7',
  razon_social: 'Cliente de Prueba SpA',
  giro: 'Servicios informáticos',
  direccion: 'Calle Falsa 123',
  comuna: 'Ñuñoa',
};

const ref = (tipo: number, cod: number) => ({
  line_num: 1,
  tipo_doc_ref: tipo,
  folio_ref: 120,
  fecha_ref: today(),
  cod_ref: cod,
  razon_ref: 'Según acuerdo comercial',
});

/** A valid body of `tipo` for the emisor `rut` (amounts in `precio` CLP where it matters). */
export function body(tipo: number, rut: string, precio = 10000): Record<string, unknown> {
  const base = { rut_emisor: rut, receptor: { ...RECEPTOR }, fecha_emision: today() };
  const item = (exento = false) => ({
    nombre: 'Martillo',
    cantidad: 1,
    precio_unitario: precio,
    exento,
    monto_item: precio,
  });
  switch (tipo) {
    case 33:
      return { ...base, tipo_dte: 33, forma_pago: 1, items: [item()] };
    case 34:
      return { ...base, tipo_dte: 34, forma_pago: 1, items: [item(true)] };
    case 46:
      return { ...base, tipo_dte: 46, forma_pago: 1, items: [item()] };
    case 52:
      return {
        ...base,
        tipo_dte: 52,
        items: [item()],
        despacho: {
          ind_traslado: 1,
          tipo_despacho: 2,
          direccion_origen: 'Bodega Quilicura 100',
          comuna_origen: 'Quilicura',
          direccion_destino: 'Obra Los Álamos 55',
          comuna_destino: 'Maipú',
          transportista: { rut: '60803000-K', razon_social: 'Transportes Sur' },
          conductor: { rut: '14-0', nombre: 'Juan Pérez' },
          vehiculo: { patente: 'ABCD12' },
        },
      };
    case 56:
      return {
        ...base,
        tipo_dte: 56,
        nd_reason: 'interese_moratorio_contractual',
        items: [item()],
        references: [ref(33, 3)],
      };
    case 61:
      return { ...base, tipo_dte: 61, nc_reason: 'devolucion', items: [item()], references: [ref(33, 3)] };
    case 110:
    case 112:
      return {
        tipo_dte: tipo,
        fecha_emision: today(),
        receptor: { razon_social: 'ACME Imports Inc.' },
        items: [
          { nombre: 'Vino tinto', cantidad: 2, precio_unitario: 10.25, monto_item: 20.5, exento: true },
        ],
        tpo_moneda: 'DOLAR USA',
        monto_total: 20.5,
        otra_moneda: { tpo_moneda: 'PESO CL', tpo_cambio: 950, mnt_exe: 19475, mnt_total: 19475 },
        ...(tipo === 112
          ? {
              referencias: [
                { tipo_doc_ref: 110, folio_ref: 9, fecha_ref: today(), codigo_ref: 1, razon_ref: 'Anula' },
              ],
            }
          : {}),
      };
    default:
      return { ...base, tipo_dte: tipo, items: [item()] };
  }
}

/** A POST /boletas body: one taxable item of gross `precio`, dated today. */
export function boletaBody(rut: string, precio = 1190): Record<string, unknown> {
  return {
    tipo_dte: 39,
    rut_emisor: rut,
    fecha_emision: today(),
    items: [{ nombre: 'Pan', cantidad: 1, precio_unitario: precio, exento: false, monto_item: precio }],
  };
}
