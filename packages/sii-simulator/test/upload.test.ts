import { expect } from 'chai';
import type { Caf } from '@dte/engine';
import { admin, estDte, estUp, upload } from './support/client';
import {
  COMPANY,
  envelope,
  factura,
  FCH_RESOL,
  OTHER_USER,
  RECEPTOR,
  SENDER,
  signDte,
  today,
  World,
} from './support/world';

describe('sii-simulator: DTEUpload and the verdicts of QueryEstUp / QueryEstDte', function () {
  this.timeout(120_000);
  let w: World;
  let token: string;
  let caf: Caf;
  let folio = 0;
  const nextFolio = () => ++folio;
  const base = () => w.base('cert');
  const send = (file: Buffer) => upload(base(), { token, sender: SENDER, company: COMPANY, file });
  const verdictOf = async (file: Buffer) => {
    const up = await send(file);
    expect(up.status, up.body).to.equal('0');
    return { ...(await estUp(base(), COMPANY, up.trackId!, token)), trackId: up.trackId! };
  };

  before(async () => {
    w = await World.start();
    await w.enrol('cert');
    token = await w.login('cert');
    caf = await w.grantCaf('cert', 33, 50);
  });
  after(() => w.close());

  it('accepts a valid EnvioDTE: RECEPCIONDTE STATUS 0 with a 10-digit TRACKID, then EPR with the counts', async () => {
    const f1 = nextFolio();
    const f2 = nextFolio();
    const file = envelope([signDte(factura(f1), caf), signDte(factura(f2, { neto: 20000 }), caf)]);
    const up = await send(file);
    expect(up.status).to.equal('0');
    expect(up.trackId).to.match(/^\d{10}$/);
    expect(up.body).to.match(
      /<RECEPCIONDTE><RUTSENDER>11111111-1<\/RUTSENDER><RUTCOMPANY>76123456-0<\/RUTCOMPANY><FILE>envio.xml<\/FILE><TIMESTAMP>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d<\/TIMESTAMP><STATUS>0<\/STATUS><TRACKID>/,
    );
    const st = await estUp(base(), COMPANY, up.trackId!, token);
    expect(st.estado).to.equal('EPR');
    expect(st.glosa).to.equal('Envio Procesado');
    expect(st.respuesta).to.contain('<TIPO_DOCTO>33</TIPO_DOCTO>');
    expect([st.informados, st.aceptados, st.rechazados, st.reparos]).to.deep.equal([[2], [2], [0], [0]]);
    const dok = await estDte(base(), {
      consultante: SENDER,
      company: COMPANY,
      receptor: RECEPTOR,
      tipo: 33,
      folio: f2,
      fecha: today(),
      monto: 23800,
      token,
    });
    expect([dok.estado, dok.errCode]).to.deep.equal(['DOK', '0']);
    const dnk = await estDte(base(), {
      consultante: SENDER,
      company: COMPANY,
      receptor: RECEPTOR,
      tipo: 33,
      folio: f2,
      fecha: today(),
      monto: 23801,
      token,
    });
    expect([dnk.estado, dnk.errCode]).to.deep.equal(['DNK', '1']);
    const fau = await estDte(base(), {
      consultante: SENDER,
      company: COMPANY,
      receptor: RECEPTOR,
      tipo: 33,
      folio: 49,
      fecha: today(),
      monto: 1,
      token,
    });
    expect([fau.estado, fau.errCode]).to.deep.equal(['FAU', '3']);
  });

  it('walks -11 → REC → SOK → FOK → CRT → PDR → PRD → EPR as time passes', async () => {
    const frozen = Date.now();
    const timed = await World.start({ timings: { registerMs: 1000, stepMs: 100 }, clock: () => frozen });
    try {
      await timed.enrol('cert');
      const t = await timed.login('cert');
      const c = await timed.grantCaf('cert', 33, 1);
      const up = await upload(timed.base('cert'), {
        token: t,
        sender: SENDER,
        company: COMPANY,
        file: envelope([signDte(factura(1), c)]),
      });
      const seen: string[] = [];
      const at = async (ms: number) => {
        await admin(timed.sim.url, 'POST', '/admin/clock', { offsetMs: ms });
        seen.push((await estUp(timed.base('cert'), COMPANY, up.trackId!, t)).estado);
      };
      for (const ms of [0, 999, 1000, 1100, 1200, 1300, 1400, 1500, 1600, 99_000]) await at(ms);
      expect(seen).to.deep.equal(['-11', '-11', 'REC', 'SOK', 'FOK', 'CRT', 'PDR', 'PRD', 'EPR', 'EPR']);
    } finally {
      await timed.close();
    }
  });

  it('rejects an envelope whose amount was changed after signing with RFR (the SetDTE signature breaks)', async () => {
    const file = envelope([signDte(factura(nextFolio()), caf)]).toString('latin1');
    const tampered = file.replace('<MntTotal>11900</MntTotal>', '<MntTotal>11000</MntTotal>');
    expect(tampered).to.not.equal(file);
    const st = await verdictOf(Buffer.from(tampered, 'latin1'));
    expect(st.estado).to.equal('RFR');
    expect(st.glosa).to.equal('Rechazado por Error en Firma');
  });

  it('rejects only the document (RCH) when a DTE changed after its own signature but the envelope was re-signed', async () => {
    const good = signDte(factura(nextFolio()), caf);
    const forged = signDte(factura(nextFolio()), caf).replace(
      '<MntTotal>11900</MntTotal>',
      '<MntTotal>11000</MntTotal>',
    );
    const st = await verdictOf(envelope([good, forged]));
    expect(st.estado).to.equal('EPR');
    expect([st.informados, st.aceptados, st.rechazados]).to.deep.equal([[2], [1], [1]]);
    const up = (await admin(w.sim.url, 'GET', `/admin/cert/uploads/${st.trackId}`)).json as {
      documents: { result: string; detail: string[] }[];
    };
    expect(up.documents[1].result).to.equal('RECHAZADO');
    expect(up.documents[1].detail.join(' ')).to.match(/firma del DTE/);
  });

  it('rejects a document stamped with a CAF not signed by the simulator SII key (RCH)', async () => {
    const foreign = w.foreignCaf('cert', {
      desde: 1000,
      hasta: 1010,
      fechaAutorizacion: today(),
      otherKey: true,
    });
    const st = await verdictOf(envelope([signDte(factura(1000), foreign)]));
    expect([st.estado, st.rechazados[0]]).to.deep.equal(['EPR', 1]);
  });

  it('rejects a document whose TED was stamped with another key than its CAF (RCH)', async () => {
    const other = w.foreignCaf('cert', { desde: 5000, hasta: 5001, fechaAutorizacion: today() });
    const st = await verdictOf(
      envelope([signDte(factura(nextFolio()), { ...caf, rsaPrivateKeyPem: other.rsaPrivateKeyPem })]),
    );
    expect(st.rechazados).to.deep.equal([1]);
    const up = (await admin(w.sim.url, 'GET', `/admin/cert/uploads/${st.trackId}`)).json as {
      documents: { detail: string[] }[];
    };
    expect(up.documents[0].detail.join(' ')).to.match(/TED/);
  });

  it('rejects a production CAF used in certification (RCH): environments do not share keys', async () => {
    const prodToken = await (async () => {
      await w.enrol('prod', COMPANY, [SENDER], FCH_RESOL, 80);
      return w.login('prod');
    })();
    expect(prodToken).to.be.a('string');
    const prodCaf = await w.grantCaf('prod', 33, 5);
    const st = await verdictOf(envelope([signDte(factura(1), prodCaf)]));
    // folio 1 was used in certification already, but the CAF check alone rejects it
    const up = (await admin(w.sim.url, 'GET', `/admin/cert/uploads/${st.trackId}`)).json as {
      documents: { detail: string[] }[];
    };
    expect(st.rechazados).to.deep.equal([1]);
    expect(up.documents[0].detail.join(' ')).to.match(/CAF no autorizado/);
  });

  it('rejects a folio outside the CAF range (RCH)', async () => {
    const small = w.foreignCaf('cert', { desde: 2000, hasta: 2001, fechaAutorizacion: today() });
    // the engine refuses to stamp outside the range, so stamp with a copy that claims more
    const st = await verdictOf(envelope([signDte(factura(2005), { ...small, hasta: 2010 })]));
    expect(st.rechazados).to.deep.equal([1]);
    const up = (await admin(w.sim.url, 'GET', `/admin/cert/uploads/${st.trackId}`)).json as {
      documents: { detail: string[] }[];
    };
    expect(up.documents[0].detail.join(' ')).to.match(/fuera del rango/);
  });

  it('rejects a folio already used (RCH), even in a different envelope', async () => {
    const f = nextFolio();
    const first = await verdictOf(envelope([signDte(factura(f), caf)]));
    expect(first.aceptados).to.deep.equal([1]);
    const again = await verdictOf(envelope([signDte(factura(f, { neto: 5000 }), caf)]));
    expect([again.estado, again.rechazados[0]]).to.deep.equal(['EPR', 1]);
    // the first document keeps its place: QueryEstDte still finds it with its own data
    const q = await estDte(base(), {
      consultante: SENDER,
      company: COMPANY,
      receptor: RECEPTOR,
      tipo: 33,
      folio: f,
      fecha: today(),
      monto: 11900,
      token,
    });
    expect(q.estado).to.equal('DOK');
  });

  it('rejects a document issued after its CAF expired (6 months for type 33) with RCH', async () => {
    const old = w.foreignCaf('cert', { desde: 3000, hasta: 3005, fechaAutorizacion: today(-200) });
    const st = await verdictOf(envelope([signDte(factura(3000), { ...old, expiresAt: null })]));
    expect(st.rechazados).to.deep.equal([1]);
    const up = (await admin(w.sim.url, 'GET', `/admin/cert/uploads/${st.trackId}`)).json as {
      documents: { detail: string[] }[];
    };
    expect(up.documents[0].detail.join(' ')).to.match(/CAF vencido/);
  });

  it('accepts with reparos a document issued long before reception (REPAROS 1, QueryEstDte DOK with RPR)', async () => {
    const older = w.foreignCaf('cert', { desde: 4000, hasta: 4005, fechaAutorizacion: today(-100) });
    const st = await verdictOf(envelope([signDte(factura(4000, { fchEmis: today(-90) }), older)]));
    expect([st.estado, st.aceptados[0], st.reparos[0], st.rechazados[0]]).to.deep.equal(['EPR', 1, 1, 0]);
    const q = await estDte(base(), {
      consultante: SENDER,
      company: COMPANY,
      receptor: RECEPTOR,
      tipo: 33,
      folio: 4000,
      fecha: today(-90),
      monto: 11900,
      token,
    });
    expect([q.estado, q.glosaEstado]).to.deep.equal(['DOK', 'RPR - Aceptado con Reparos']);
  });

  it('rejects the Carátula (RCT): wrong resolution, RutEnvia of another person', async () => {
    const wrongResol = await verdictOf(
      envelope([signDte(factura(nextFolio()), caf)], { fchResol: '2020-01-01' }),
    );
    expect(wrongResol.estado).to.equal('RCT');
    expect(wrongResol.glosa).to.equal('Rechazado por Error en Caratula');
    // an envelope signed and declared by another person, uploaded with SENDER's token
    const other = await verdictOf(envelope([signDte(factura(nextFolio()), caf)], { rutEnvia: OTHER_USER }));
    expect(other.estado).to.equal('RCT');
  });

  it('rejects a schema-invalid envelope with RSC after accepting the upload (STATUS 0)', async () => {
    const file = envelope([signDte(factura(nextFolio()), caf)]).toString('latin1');
    const bad = file.replace(
      /<RutReceptor>60803000-K<\/RutReceptor>/,
      '<RutReceptor>60.803.000-K</RutReceptor>',
    );
    expect(bad).to.not.equal(file);
    const st = await verdictOf(Buffer.from(bad, 'latin1'));
    expect(st.estado).to.equal('RSC');
  });

  it('answers 7 for a file broken only inside a DTE (each DTE is parsed once, standalone), 0 for a well-formed one that hides a DTE in a comment', async () => {
    const dte = signDte(factura(nextFolio()), caf);
    const other = signDte(factura(nextFolio()), caf);
    const file = envelope([dte, other]).toString('latin1');
    const variants = {
      'mismatched end tag in a DTE': file.replace(/<\/Folio>/, '</Folo>'),
      'a DTE in a comment holding --': file.replace(dte, `<!-- ${dte.replace('<Folio>', '<Folio>--')} -->`),
      'a DTE in an attribute value': file
        .replace(dte, '')
        .replace('<Caratula version="1.0">', `<Caratula version="1.0" x="${dte}">`),
      'an unbound prefix in a DTE': file.replace(dte, dte.replace('<Folio>', '<x:y/><Folio>')),
      'a DTE in a comment': file.replace(dte, `<!-- ${dte} -->`),
    };
    const statuses: Record<string, string | undefined> = {};
    for (const [what, text] of Object.entries(variants)) {
      expect(text, what).to.not.equal(file);
      statuses[what] = (await send(Buffer.from(text, 'latin1'))).status;
    }
    expect(statuses).to.deep.equal({
      'mismatched end tag in a DTE': '7',
      'a DTE in a comment holding --': '7',
      'a DTE in an attribute value': '7',
      'an unbound prefix in a DTE': '7',
      'a DTE in a comment': '0',
    });
  });

  it('answers the upload STATUS codes: 5 token, 1 sender, 6 company, 2 empty, 7 unreadable, 99 repeated', async () => {
    const file = envelope([signDte(factura(nextFolio()), caf)]);
    expect((await upload(base(), { sender: SENDER, company: COMPANY, file })).status).to.equal('5');
    expect((await upload(base(), { token: 'NOPE', sender: SENDER, company: COMPANY, file })).status).to.equal(
      '5',
    );
    expect((await upload(base(), { token, sender: OTHER_USER, company: COMPANY, file })).status).to.equal(
      '1',
    );
    expect((await upload(base(), { token, sender: SENDER, company: '96543210-8', file })).status).to.equal(
      '6',
    );
    expect(
      (await upload(base(), { token, sender: SENDER, company: COMPANY, file: Buffer.alloc(0) })).status,
    ).to.equal('2');
    expect(
      (await upload(base(), { token, sender: SENDER, company: COMPANY, file: Buffer.from('hola') })).status,
    ).to.equal('7');
    const first = await upload(base(), { token, sender: SENDER, company: COMPANY, file });
    expect(first.status).to.equal('0');
    const repeated = await upload(base(), { token, sender: SENDER, company: COMPANY, file });
    expect(repeated.status).to.equal('99');
    expect(repeated.trackId).to.equal(undefined);
  });

  it('answers QueryEstUp with 003 for a bad token, -6 for a user without permission, -11 for a foreign track id', async () => {
    const file = envelope([signDte(factura(nextFolio()), caf)]);
    const up = await send(file);
    expect((await estUp(base(), COMPANY, up.trackId!, 'BAD')).estado).to.equal('003');
    expect((await estUp(base(), '96543210-8', up.trackId!, token)).estado).to.equal('-6');
    expect((await estUp(base(), COMPANY, '0000000001', token)).estado).to.equal('-11');
    // the track id belongs to certification only
    expect((await estUp(w.base('prod'), COMPANY, up.trackId!, w.token.prod!)).estado).to.equal('-11');
  });
});
