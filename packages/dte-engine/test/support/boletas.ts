import type { BoletaInput } from '../../src';
import { today } from './credentials';
import { EMISOR_RUT } from './documents';

/** The issuer profile of the boleta tests. */
export const BOLETA_EMISOR = {
  rut: EMISOR_RUT,
  razonSocial: 'COMERCIAL ÑANDÚ & COMPAÑÍA LIMITADA',
  giro: 'Venta al por menor',
  acteco: [471100],
  direccion: 'Av. Providencia 1234',
  comuna: 'Providencia',
};

/** A boleta 39 of today: taxable and exempt items, a fractional quantity. */
export function boleta39(): BoletaInput {
  return {
    tipo_dte: 39,
    rut_emisor: EMISOR_RUT,
    fecha_emision: today(),
    items: [
      { nombre: 'Café en grano 1 kg', cantidad: 2, precio_unitario: 5990, exento: false, monto_item: 11980 },
      { nombre: 'Libro de recetas', cantidad: 1, precio_unitario: 12000, exento: true, monto_item: 12000 },
      { nombre: 'Azúcar granel', cantidad: 0.5, precio_unitario: 1999, exento: false, monto_item: 1000 },
    ],
  };
}
