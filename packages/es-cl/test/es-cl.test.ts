/**
 * The es-CL rules as the server uses them (the same file the dashboard serves to the browser:
 * test/billing/es-cl-mail-and-page.test.ts compares both runtimes): CLP with dots, dd-mm-aaaa,
 * instants in Chile's time across its two offsets, months in words, typed dates checked.
 */
import { expect } from 'chai';
import * as esCl from '@dte/es-cl';
import { clp, dia, diaApi, entero, fecha, hoy, mes, MESES, ZONA } from '@dte/es-cl';

describe('@dte/es-cl: amounts, numbers, dates and months in Spanish (Chile)', () => {
  it('exports what index.d.ts declares, nothing more', () => {
    expect(Object.keys(esCl).sort()).to.deep.equal(
      ['MESES', 'ZONA', 'clp', 'dia', 'diaApi', 'entero', 'fecha', 'hoy', 'mes'].sort(),
    );
  });

  it('CLP as $1.234.567 (whole pesos), numbers with dots for thousands', () => {
    expect(clp(1234567)).to.equal('$1.234.567');
    expect(clp('23800')).to.equal('$23.800');
    expect(clp(999)).to.equal('$999');
    expect(clp(1499.6)).to.equal('$1.500');
    expect(clp(null)).to.equal('$0');
    expect(clp('no es un número')).to.equal('$0');
    expect(entero(1600)).to.equal('1.600');
    expect(entero(2000000)).to.equal('2.000.000');
    expect(entero(80)).to.equal('80');
  });

  it('calendar dates as dd-mm-aaaa; a typed dd-mm-aaaa back only when it is a real date', () => {
    expect(dia('2026-11-02')).to.equal('02-11-2026');
    expect(dia('2026-11-02T10:00:00Z')).to.equal('02-11-2026');
    expect(dia(null)).to.equal('—');
    expect(dia('ayer')).to.equal('ayer');
    expect(diaApi('2/11/2026')).to.equal('2026-11-02');
    expect(diaApi(' 29-02-2028 ')).to.equal('2028-02-29');
    expect(diaApi('29-02-2027')).to.equal(null);
    expect(diaApi('31-04-2026')).to.equal(null);
    expect(diaApi('2026-11-02')).to.equal(null);
  });

  it("instants as dd-mm-aaaa hh:mm in Chile's time, summer (UTC-3) and winter (UTC-4)", () => {
    expect(ZONA).to.equal('America/Santiago');
    expect(fecha('2026-01-15T15:30:00Z')).to.equal('15-01-2026 12:30');
    expect(fecha(new Date('2026-07-15T15:30:00Z'))).to.equal('15-07-2026 11:30');
    // past midnight UTC is still the day before in Chile
    expect(fecha('2026-07-01T02:05:00Z')).to.equal('30-06-2026 22:05');
    expect(fecha(undefined)).to.equal('—');
    expect(fecha('no es una fecha')).to.equal('no es una fecha');
  });

  it('months in words; today is the date in Chile', () => {
    expect(MESES).to.have.length(12);
    expect(mes('2026-11')).to.equal('noviembre de 2026');
    expect(mes('2027-01')).to.equal('enero de 2027');
    expect(mes('2026-13')).to.equal('2026-13');
    expect(hoy()).to.equal(
      new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago' }).format(new Date()),
    );
  });
});
