/**
 * The bound of 5 receptor mailboxes (issue 28): the library's own check, which the resend path
 * and every send apply, admits only single mailboxes, so no entry fans out into more recipients.
 */
import { expect } from 'chai';
import { isReceptorEmail, parseCorreos } from '../src/delivery';

describe('receptor-delivery: correo_receptor is at most 5 single mailboxes', () => {
  it('refuses an entry a mail library would read as several recipients', () => {
    for (const c of [
      'a,b,c,d,e,f@x.cl',
      'a@x.cl;b@y.cl',
      '"a@x.cl,b"@y.cl',
      'Ana <a@x.cl>',
      'g:a,b,c;@x.cl',
      'a b@x.cl',
      'a@x.cl,',
    ]) {
      expect(isReceptorEmail(c), c).to.equal(false);
      expect(() => parseCorreos([c]), c).to.throw(/correo_receptor/);
    }
  });

  it('admits 1-5 ordinary addresses and no more', () => {
    const five = [
      'ana@empresa.cl',
      'pago.proveedores+dte@cliente.com',
      'a-b@sub.dominio.cl',
      'x@y.co',
      'z@w.io',
    ];
    expect(parseCorreos(five)).to.deep.equal(five);
    expect(() => parseCorreos([...five, 'seis@x.cl'])).to.throw(/1-5/);
    expect(() => parseCorreos([])).to.throw(/1-5/);
    expect(isReceptorEmail(`${'a'.repeat(190)}@empresa.cl`)).to.equal(false); // over 200
  });
});
