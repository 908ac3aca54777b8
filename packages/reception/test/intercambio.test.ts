import { expect } from 'chai';
import { readReceivedXml, ReceptionRefused, type ReceivedDocument } from '../src';
import { attackFiles } from './support/attacks';
import { createTestSiiKey } from '@dte/engine';
import { RECEPTION_THREAD_BOUNDS, readReceivedXmlOffThread, ReceptionUnavailable } from '../src';
import { intercambio, invoice, loneDte, makeSupplier, signed, siiKeysOf } from './support/supplier';

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
  const KEYS = siiKeysOf(s);

  it('reads a verified EnvioDTE addressed to us: each DTE with its amounts and its own XML', () => {
    const a = signed(s, invoice(s, ME, 10_000));
    const b = signed(s, invoice(s, ME, 20_000));
    const docs: ReceivedDocument[] = readReceivedXml(intercambio(s, [a, b], ME), {
      rutReceptor: ME,
      siiPublicKeys: KEYS,
    });
    expect(docs.map((d) => [d.folio, d.mntNeto, d.iva, d.mntTotal])).to.deep.equal([
      [1, 10_000, 1_900, 11_900],
      [2, 20_000, 3_800, 23_800],
    ]);
    expect(docs[0]).to.include({ rutEmisor: '96543210-8', razonSocialEmisor: 'PROVEEDOR SPA', tipoDte: 33 });
    expect(docs[0]!.xml.toString('latin1')).to.equal(a);
  });

  it('reads a lone DTE (not inside an EnvioDTE) the same way', () => {
    const a = signed(s, invoice(s, ME));
    const [d] = readReceivedXml(loneDte(a), { rutReceptor: ME, siiPublicKeys: KEYS });
    expect(d).to.include({ tipoDte: 33, rutReceptor: ME });
  });

  for (const [name, attack] of Object.entries(attackFiles(ME))) {
    it(`refuses a hostile file: ${name} (${attack.reason})`, () => {
      const r = refusal(() => readReceivedXml(attack.xml, { rutReceptor: ME, siiPublicKeys: KEYS }));
      expect(r.reason).to.equal(attack.reason);
    });
  }

  it('refuses an oversize file before reading it', () => {
    const a = signed(s, invoice(s, ME));
    const file = intercambio(s, [a], ME);
    const r = refusal(() =>
      readReceivedXml(file, { rutReceptor: ME, siiPublicKeys: KEYS, limits: { maxBytes: file.length - 1 } }),
    );
    expect(r.reason).to.equal('tamano_excedido');
  });

  it('refuses a tampered DTE (amount changed after signing, envelope re-signed) naming the document', () => {
    const good = signed(s, invoice(s, ME, 30_000));
    const tampered = good.replace('<MntTotal>35700</MntTotal>', '<MntTotal>3570</MntTotal>');
    expect(tampered).to.not.equal(good);
    const r = refusal(() =>
      readReceivedXml(intercambio(s, [tampered], ME), { rutReceptor: ME, siiPublicKeys: KEYS }),
    );
    expect(['firma_dte_invalida', 'ted_invalido', 'totales_invalidos']).to.include(r.reason);
    expect(r.reason).to.equal('firma_dte_invalida');
    expect(r.documento?.index).to.equal(0);
  });

  it('refuses an envelope changed after it was signed', () => {
    const file = intercambio(s, [signed(s, invoice(s, ME))], ME).toString('latin1');
    const changed = Buffer.from(file.replace('<NroResol>0</NroResol>', '<NroResol>1</NroResol>'), 'latin1');
    expect(refusal(() => readReceivedXml(changed, { rutReceptor: ME, siiPublicKeys: KEYS })).reason).to.equal(
      'firma_sobre_invalida',
    );
  });

  it('refuses a DTE addressed to another company, and an envelope for another company', () => {
    const other = '77777777-7';
    const forOther = signed(s, invoice(s, other));
    expect(
      refusal(() => readReceivedXml(intercambio(s, [forOther], ME), { rutReceptor: ME, siiPublicKeys: KEYS }))
        .reason,
    ).to.equal('dte_para_otra_empresa');
    const mine = signed(s, invoice(s, ME));
    expect(
      refusal(() => readReceivedXml(intercambio(s, [mine], other), { rutReceptor: ME, siiPublicKeys: KEYS }))
        .reason,
    ).to.equal('sobre_para_otra_empresa');
    expect(
      refusal(() => readReceivedXml(loneDte(forOther), { rutReceptor: ME, siiPublicKeys: KEYS })).reason,
    ).to.equal('dte_para_otra_empresa');
  });

  it('refuses a DTE whose CAF the SII did not sign (a forged CAF: same IDK, another key), and one with no key for its IDK', () => {
    const forger = makeSupplier(s.rut, createTestSiiKey(100));
    const forged = signed(forger, invoice(forger, ME));
    const r = refusal(() =>
      readReceivedXml(intercambio(forger, [forged], ME), { rutReceptor: ME, siiPublicKeys: KEYS }),
    );
    expect(r.reason).to.equal('caf_invalido');
    expect(r.message).to.match(/FRMA does not verify/);
    const genuine = intercambio(s, [signed(s, invoice(s, ME))], ME);
    expect(refusal(() => readReceivedXml(genuine, { rutReceptor: ME, siiPublicKeys: {} })).reason).to.equal(
      'caf_invalido',
    );
  });

  it('refuses a DTE stamped with a CAF the SII granted to another issuer', () => {
    const other = makeSupplier('11111111-1', s.siiKey);
    // the other issuer's genuine CAF, used to stamp a document in the supplier's name
    // (the engine refuses to stamp so: its parsed RE is changed, the DA the SII signed is not)
    const posing = { ...other, rut: s.rut, caf: { ...other.caf, rutEmisor: s.rut } };
    const doc = signed(posing, invoice(posing, ME));
    const r = refusal(() =>
      readReceivedXml(intercambio(posing, [doc], ME), { rutReceptor: ME, siiPublicKeys: KEYS }),
    );
    expect(r.reason).to.equal('caf_invalido');
    expect(r.message).to.match(/granted to 11111111-1/);
  });

  it('off the event loop: the same documents and the same refusals, with their reason and document', async () => {
    const a = signed(s, invoice(s, ME, 10_000));
    const docs = await readReceivedXmlOffThread(intercambio(s, [a], ME), {
      rutReceptor: ME,
      siiPublicKeys: KEYS,
    });
    expect(docs.map((d) => [d.mntNeto, d.mntTotal])).to.deep.equal([[10_000, 11_900]]);
    expect(Buffer.isBuffer(docs[0]!.xml) && docs[0]!.xml.toString('latin1')).to.equal(a);
    const err = await readReceivedXmlOffThread(intercambio(s, [a], ME), {
      rutReceptor: ME,
      siiPublicKeys: {},
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ReceptionRefused);
    expect(err).to.include({ reason: 'caf_invalido' });
    expect((err as ReceptionRefused).documento).to.deep.include({ index: 0 });
  });

  it('off the event loop: more files than may wait are refused at once (recepcion_ocupada), the others verified', async () => {
    const file = intercambio(s, [signed(s, invoice(s, ME, 20_000))], ME);
    const { queueMax } = RECEPTION_THREAD_BOUNDS;
    const outcomes = await Promise.allSettled(
      Array.from({ length: queueMax + 4 }, () =>
        readReceivedXmlOffThread(file, { rutReceptor: ME, siiPublicKeys: KEYS }),
      ),
    );
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    const read = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    // the running file aside, queueMax wait: the rest is refused without waiting
    expect(read.length).to.be.within(queueMax, queueMax + 1);
    expect(refused).to.have.length(outcomes.length - read.length);
    for (const err of refused) {
      expect(err).to.be.instanceOf(ReceptionUnavailable);
      expect(err).to.include({ reason: 'recepcion_ocupada' });
      expect((err as Error).message).to.match(/8 received files are already waiting/);
    }
    for (const docs of read) expect(docs.map((d) => d.mntTotal)).to.deep.equal([23_800]);
  });
});
