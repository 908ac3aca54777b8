import { expect } from 'chai';
import { fechaEmisionWindow, santiagoDate, validateEmission } from '../../src/input';
import { EMISOR, RECEPTOR, caught, ctx, factura } from './fixtures';

/**
 * fecha_emision window in America/Santiago: day 1 of the current month through today+7
 * (type 52: today through today+7). Clocks sit where the UTC date and the Santiago date differ.
 * Chile is UTC-3 in summer (March) and UTC-4 in winter (July).
 */
// 2026-03-01 02:30 UTC = 2026-02-28 23:30 in Santiago (UTC-3): still February there.
const END_OF_FEBRUARY = new Date('2026-03-01T02:30:00Z');
// 2026-03-01 03:00 UTC = 2026-03-01 00:00 in Santiago: March has begun.
const START_OF_MARCH = new Date('2026-03-01T03:00:00Z');
// 2026-07-01 03:30 UTC = 2026-06-30 23:30 in Santiago (UTC-4 in winter).
const END_OF_JUNE = new Date('2026-07-01T03:30:00Z');

function outcome(fecha: string | undefined, now: Date, tipo: 33 | 52 = 33): string {
  const body =
    tipo === 33
      ? factura({ fecha_emision: fecha })
      : {
          tipo_dte: 52,
          rut_emisor: EMISOR.rut,
          receptor: RECEPTOR,
          fecha_emision: fecha,
          items: [{ nombre: 'X', cantidad: 1, precio_unitario: 0, exento: false, monto_item: 0 }],
          despacho: {
            ind_traslado: 5,
            direccion_origen: 'A',
            comuna_origen: 'B',
            direccion_destino: 'C',
            comuna_destino: 'D',
          },
        };
  try {
    validateEmission(body, ctx(now));
    return 'ok';
  } catch (err) {
    const e = err as { code: string; issues?: { path: string }[] };
    return `${e.code}:${(e.issues ?? []).map((i) => i.path).join(',')}`;
  }
}

describe('input: fecha_emision window in America/Santiago', () => {
  it('today is the Santiago date, not the UTC date', () => {
    expect(santiagoDate(END_OF_FEBRUARY)).to.equal('2026-02-28');
    expect(santiagoDate(START_OF_MARCH)).to.equal('2026-03-01');
    expect(santiagoDate(END_OF_JUNE)).to.equal('2026-06-30');
    expect(fechaEmisionWindow(END_OF_FEBRUARY, 33)).to.deep.equal({ from: '2026-02-01', to: '2026-03-07' });
    expect(fechaEmisionWindow(END_OF_FEBRUARY, 52)).to.deep.equal({ from: '2026-02-28', to: '2026-03-07' });
  });

  it('late on the last day of February in Santiago (already March 1 in UTC)', () => {
    expect(outcome('2026-02-01', END_OF_FEBRUARY)).to.equal('ok');
    expect(outcome('2026-01-31', END_OF_FEBRUARY)).to.equal('validation_failed:fecha_emision');
    expect(outcome('2026-03-07', END_OF_FEBRUARY)).to.equal('ok');
    expect(outcome('2026-03-08', END_OF_FEBRUARY)).to.equal('validation_failed:fecha_emision');
  });

  it('at midnight of March 1 in Santiago February is closed', () => {
    expect(outcome('2026-02-28', START_OF_MARCH)).to.equal('validation_failed:fecha_emision');
    expect(outcome('2026-03-01', START_OF_MARCH)).to.equal('ok');
    expect(outcome('2026-03-08', START_OF_MARCH)).to.equal('ok');
    expect(outcome('2026-03-09', START_OF_MARCH)).to.equal('validation_failed:fecha_emision');
  });

  it('winter time (UTC-4): June 30 23:30 in Santiago is July 1 in UTC', () => {
    expect(outcome('2026-06-01', END_OF_JUNE)).to.equal('ok');
    expect(outcome('2026-05-31', END_OF_JUNE)).to.equal('validation_failed:fecha_emision');
    expect(outcome('2026-07-07', END_OF_JUNE)).to.equal('ok');
    expect(outcome('2026-07-08', END_OF_JUNE)).to.equal('validation_failed:fecha_emision');
  });

  it('fecha_emision defaults to today in Santiago', () => {
    const input = validateEmission(factura({ fecha_emision: undefined }), ctx(END_OF_FEBRUARY));
    expect(input.fecha_emision).to.equal('2026-02-28');
  });

  it('type 52: required, only today through today+7', () => {
    expect(outcome('2026-02-28', END_OF_FEBRUARY, 52)).to.equal('ok');
    expect(outcome('2026-02-27', END_OF_FEBRUARY, 52)).to.equal('validation_failed:fecha_emision');
    expect(outcome('2026-03-01', END_OF_FEBRUARY, 52)).to.equal('ok');
    expect(outcome('2026-03-07', END_OF_FEBRUARY, 52)).to.equal('ok');
    expect(outcome('2026-03-08', END_OF_FEBRUARY, 52)).to.equal('validation_failed:fecha_emision');
    expect(outcome('2026-02-28', START_OF_MARCH, 52)).to.equal('validation_failed:fecha_emision');
    expect(outcome(undefined, END_OF_FEBRUARY, 52)).to.equal('validation_failed:fecha_emision');
  });

  it('a non-existent calendar date is a schema failure', () => {
    const err = caught(() =>
      validateEmission(factura({ fecha_emision: '2026-02-29' }), ctx(END_OF_FEBRUARY)),
    );
    expect(err.code).to.equal('validation_failed');
    expect(err.issues).to.deep.equal([
      { path: 'fecha_emision', message: 'must be a calendar date YYYY-MM-DD' },
    ]);
  });
});
