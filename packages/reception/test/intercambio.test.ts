import { expect } from 'chai';
import { readReceivedXml, ReceptionRefused, type ReceivedDocument } from '../src';
import { attackFiles } from './support/attacks';
import { intercambio, invoice, loneDte, makeSupplier, signed } from './support/supplier';

const ME = '76086428-5';

function refusal(f: () => unknown): ReceptionRefused {
  try {
    f();
  } catch (err) {
    if (err instanceof ReceptionRefused) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

describe('reception: received intercambio files', function () {
  this.timeout(60_000);
  const s = makeSupplier();

  it('reads a verified EnvioDTE addressed to us: each DTE with its amounts and its own XML', () => {
    const a = signed(s, invoice(s, ME, 10_000));
    const b = signed(s, invoice(s, ME, 20_000));
    const docs: ReceivedDocument[] = readReceivedXml(intercambio(s, [a, b], ME), { rutReceptor: ME });
    expect(docs.map((d) => [d.folio, d.mntNeto, d.iva, d.mntTotal])).to.deep.equal([
      [1, 10_000, 1_900, 11_900],
      [2, 20_000, 3_800, 23_800],
    ]);
    expect(docs[0]).to.include({ rutEmisor: '96543210-8', razonSocialEmisor: 'PROVEEDOR SPA', tipoDte: 33 });
    expect(docs[0]!.xml.toString('latin1')).to.equal(a);
  });

  it('reads a lone DTE (not inside an EnvioDTE) the same way', () => {
    const a = signed(s, invoice(s, ME));
    const [d] = readReceivedXml(loneDte(a), { rutReceptor: ME });
    expect(d).to.include({ tipoDte: 33, rutReceptor: ME });
  });

  for (const [name, attack] of Object.entries(attackFiles(ME))) {
    it(`refuses a hostile file: ${name} (${attack.reason})`, () => {
      const r = refusal(() => readReceivedXml(attack.xml, { rutReceptor: ME }));
      expect(r.reason).to.equal(attack.reason);
    });
  }

  it('refuses an oversize file before reading it', () => {
    const a = signed(s, invoice(s, ME));
    const file = intercambio(s, [a], ME);
    const r = refusal(() =>
      readReceivedXml(file, { rutReceptor: ME, limits: { maxBytes: file.length - 1 } }),
    );
    expect(r.reason).to.equal('tamano_excedido');
  });

  it('refuses a tampered DTE (amount changed after signing, envelope re-signed) naming the document', () => {
    const good = signed(s, invoice(s, ME, 30_000));
    const tampered = good.replace('<MntTotal>35700</MntTotal>', '<MntTotal>3570</MntTotal>');
    expect(tampered).to.not.equal(good);
    const r = refusal(() => readReceivedXml(intercambio(s, [tampered], ME), { rutReceptor: ME }));
    expect(['firma_dte_invalida', 'ted_invalido', 'totales_invalidos']).to.include(r.reason);
    expect(r.reason).to.equal('firma_dte_invalida');
    expect(r.documento?.index).to.equal(0);
  });

  it('refuses an envelope changed after it was signed', () => {
    const file = intercambio(s, [signed(s, invoice(s, ME))], ME).toString('latin1');
    const changed = Buffer.from(file.replace('<NroResol>0</NroResol>', '<NroResol>1</NroResol>'), 'latin1');
    expect(refusal(() => readReceivedXml(changed, { rutReceptor: ME })).reason).to.equal(
      'firma_sobre_invalida',
    );
  });

  it('refuses a DTE addressed to another company, and an envelope for another company', () => {
    const other = '77777777-7';
    const forOther = signed(s, invoice(s, other));
    expect(
      refusal(() => readReceivedXml(intercambio(s, [forOther], ME), { rutReceptor: ME })).reason,
    ).to.equal('dte_para_otra_empresa');
    const mine = signed(s, invoice(s, ME));
    expect(
      refusal(() => readReceivedXml(intercambio(s, [mine], other), { rutReceptor: ME })).reason,
    ).to.equal('sobre_para_otra_empresa');
    expect(refusal(() => readReceivedXml(loneDte(forOther), { rutReceptor: ME })).reason).to.equal(
      'dte_para_otra_empresa',
    );
  });
});
