import type { EmisorProfile, EmissionContext } from '../../src/input';

/** A company with valid RUT 76086428-5 (check digit computed by hand: see rut.test.ts). */
export const EMISOR: EmisorProfile = {
  rut: '76086428-5',
  razonSocial: 'Comercializadora Ñandú Ltda.',
  giro: 'Venta al por mayor de artículos de ferretería',
  acteco: [467300],
  direccion: 'Av. Providencia 1234, of. 56',
  comuna: 'Providencia',
  ciudad: 'Santiago',
  sucursales: [
    {
      id: 'suc-1',
      nombre: 'Casa Matriz',
      codigoSii: 81234567,
      direccion: 'Huérfanos 1160',
      comuna: 'Santiago',
    },
  ],
};

/** 2026-03-10 12:00 in Santiago (UTC-3 in March). */
export const NOW = new Date('2026-03-10T15:00:00Z');

export function ctx(now: Date = NOW, extra: Partial<EmissionContext> = {}): EmissionContext {
  return { now, emisor: EMISOR, ...extra };
}

/** Receptor with a valid RUT (77777777-7: 7*(2+3+4+5+6+7+2+3)=224, 224 % 11 = 4, 11-4 = 7). */
export const RECEPTOR = {
  rut: '77777777-7',
  razon_social: 'Cliente de Prueba SpA',
  giro: 'Servicios informáticos',
  direccion: 'Calle Falsa 123',
  comuna: 'Ñuñoa',
};

export function factura(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    tipo_dte: 33,
    rut_emisor: EMISOR.rut,
    receptor: { ...RECEPTOR },
    forma_pago: 1,
    fecha_emision: '2026-03-10',
    items: [{ nombre: 'Martillo', cantidad: 2, precio_unitario: 5000, exento: false, monto_item: 10000 }],
    ...overrides,
  };
}

/** Runs `fn` and returns the error it throws (fails when it does not throw). */
export function caught(fn: () => unknown): {
  code: string;
  message: string;
  detail?: Record<string, unknown>;
  issues?: { path: string; message: string }[];
} {
  try {
    fn();
  } catch (err) {
    return err as never;
  }
  throw new Error('expected an error, none was thrown');
}
