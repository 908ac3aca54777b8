import { expect } from 'chai';
import {
  cesionBlock,
  checkPeriodo,
  parseSiiDateTime,
  plazoLegal,
  receptorEstado,
  registerOutcome,
  siiEstado,
} from '../src';

describe('reception: deadline, cesión, register words', () => {
  const rec = new Date('2026-11-10T15:00:00Z');

  it('the legal window: eight calendar days after the reception day, to midnight (Chile) of the last', () => {
    // received 2026-11-10 12:00 in Chile (UTC-3): the last day is 18-11-2026, ending 19-11 00:00 Chile
    expect(plazoLegal(rec, new Date('2026-11-12T15:00:00Z'))).to.deep.equal({
      fecha_recepcion_sii: '2026-11-10T15:00:00.000Z',
      vence: '2026-11-19T03:00:00.000Z',
      dias_restantes: 6,
      en_plazo: true,
    });
    // +192 h has passed, but the 8th day has not ended: still open (the old rule closed it here)
    expect(plazoLegal(rec, new Date('2026-11-18T15:00:01Z'))).to.include({
      en_plazo: true,
      dias_restantes: 0,
    });
    expect(plazoLegal(rec, new Date('2026-11-19T02:59:59.999Z'))).to.include({ en_plazo: true });
    expect(plazoLegal(rec, new Date('2026-11-19T03:00:00Z'))).to.include({
      en_plazo: false,
      dias_restantes: 0,
    });
    expect(plazoLegal(null, rec)).to.include({ vence: null, en_plazo: null });
  });

  it("the legal window counts Chile's calendar day, not the UTC one, across a daylight-saving change", () => {
    // 2026-11-10T02:30Z is 09-11-2026 23:30 in Chile: the reception day is the 9th, the last the 17th
    expect(plazoLegal(new Date('2026-11-10T02:30:00Z'), new Date('2026-11-10T03:00:00Z')).vence).to.equal(
      '2026-11-18T03:00:00.000Z',
    );
    // received 28-08-2026 (UTC-4); the last day, 05-09, ends when Chile moves to UTC-3 (00:00 → 01:00)
    expect(plazoLegal(new Date('2026-08-28T16:00:00Z'), new Date('2026-08-29T00:00:00Z')).vence).to.equal(
      '2026-09-06T04:00:00.000Z',
    );
  });

  it('cesión: cedida with the assignee only with current evidence, else indeterminado with a reason', () => {
    const now = new Date('2026-11-12T00:00:00Z');
    const who = { rut: '99888777-6', razon_social: 'FACTOR SPA', fecha_cesion: '2026-11-11' };
    expect(
      cesionBlock(
        { cesionario: who, consultadoAl: new Date('2026-11-11T23:00:00Z'), fchEmis: '2026-11-10' },
        now,
      ),
    ).to.deep.equal({
      estado: 'cedida',
      cesionario: who,
      consultadoAl: '2026-11-11T23:00:00.000Z',
    });
    expect(cesionBlock({ cesionario: null, consultadoAl: now, fchEmis: '2026-11-10' }, now).estado).to.equal(
      'no_cedida',
    );
    const old = cesionBlock(
      { cesionario: who, consultadoAl: new Date('2026-11-09T00:00:00Z'), fchEmis: '2026-11-08' },
      now,
    );
    expect(old).to.deep.equal({
      estado: 'indeterminado',
      consultadoAl: '2026-11-09T00:00:00.000Z',
      motivo: 'consulta_vencida',
    });
    expect(cesionBlock({ cesionario: null, consultadoAl: now, fchEmis: null }, now)).to.include({
      estado: 'indeterminado',
      motivo: 'fecha_emision_desconocida',
    });
    expect(
      cesionBlock({ cesionario: undefined, consultadoAl: null, fchEmis: '2026-11-10' }, now).motivo,
    ).to.equal('sin_consulta_sii');
  });

  it('maps the SII register states and events', () => {
    expect(siiEstado('PENDIENTE', [])).to.equal('pending');
    expect(siiEstado('REGISTRO', [])).to.equal('registered');
    expect(siiEstado('REGISTRO', ['ERM'])).to.equal('accepted');
    expect(siiEstado('RECLAMADO', ['RFP'])).to.equal('claimed');
    const now = new Date('2026-11-12T00:00:00Z');
    expect(receptorEstado(true, ['RCD'], rec, now)).to.equal('reclamado');
    expect(receptorEstado(true, ['ACD'], rec, now)).to.equal('aceptado');
    expect(receptorEstado(true, [], rec, now)).to.equal('en_plazo');
    expect(receptorEstado(true, [], rec, new Date('2026-11-20T00:00:00Z'))).to.equal('aceptado_tacito');
    expect(receptorEstado(false, [], rec, now)).to.equal('sin_info');
  });

  it('register answers: 0 and 7 recorded, 3 tipo no soportado, others rechazado with codResp', () => {
    expect(registerOutcome({ codResp: 7, descResp: 'x' })).to.include({ recorded: true, repeated: true });
    expect(() => registerOutcome({ codResp: 3, descResp: '' }))
      .to.throw()
      .with.property('code', 'recepcion.rar_tipo_no_soportado');
    const err = (() => {
      try {
        registerOutcome({ codResp: 8, descResp: 'Pasados 8 dias' });
      } catch (e) {
        return e as { code: string; detail: Record<string, unknown> };
      }
      throw new Error('no error');
    })();
    expect(err.code).to.equal('recepcion.rar_evento_rechazado');
    expect(err.detail).to.include({ codResp: 8 });
  });

  it('periodo: YYYY-MM and not in the future', () => {
    const now = new Date('2026-11-24T12:00:00Z');
    expect(checkPeriodo('2026-11', now)).to.equal('2026-11');
    for (const bad of ['2026-12', '2026-13', '202611', 'x', undefined])
      expect(() => checkPeriodo(bad, now))
        .to.throw()
        .with.property('code', 'rcv.period.invalid');
  });

  it('reads the SII register dates as Chilean time (summer UTC-3, winter UTC-4)', () => {
    expect(parseSiiDateTime('24-11-2026 08:30:00')?.toISOString()).to.equal('2026-11-24T11:30:00.000Z');
    expect(parseSiiDateTime('15-07-2026 08:30:00')?.toISOString()).to.equal('2026-07-15T12:30:00.000Z');
    expect(parseSiiDateTime('')).to.equal(null);
  });
});
