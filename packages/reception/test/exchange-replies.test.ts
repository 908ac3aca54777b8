/**
 * The exchange replies as the SII's schemas and an independent XML-DSig verifier see them:
 * RespuestaDTE (RecepcionEnvio, ResultadoDTE) and EnvioRecibos, built from a supplier's real
 * envelope, validated with xmllint against ../shared/sii/schemas and verified with xmlsec1.
 */
import { createTestP12, readP12 } from '@dte/engine';
import { expect } from 'chai';
import {
  buildEnvioRecibos,
  buildRespuestaRecepcion,
  buildRespuestaResultado,
  DECLARACION_RECIBO,
  estadoRecepDteOf,
  readReceivedEnvelope,
} from '../src';
import { xmllintSchema, xmlsecVerify } from '../../dte-engine/test/support/oracles';
import { intercambio, invoice, makeSupplier, signed, siiKeysOf } from './support/supplier';

const ME = '76086428-5';
const receiver = readP12(createTestP12({ rut: '11111111-1', name: 'Firmante Receptor', password: 'x' }), 'x');

function xsd(xml: Buffer, schema: string) {
  return xmllintSchema(xml, schema);
}

function xmlsec(xml: Buffer, ids: string[], nodeXpath?: string) {
  return xmlsecVerify(xml, nodeXpath, ids);
}

describe('reception: exchange replies (RespuestaDTE, EnvioRecibos)', function () {
  this.timeout(60_000);
  const s = makeSupplier();
  const signer = { rutResponde: ME, rutRecibe: s.rut, credential: receiver, timestamp: new Date() };

  it('a partly bad envelope is answered document by document: RecepcionEnvio 0, each DTE with its own state, schema-valid and signed', () => {
    const good = signed(s, invoice(s, ME, 10_000));
    const forged = signed(s, invoice(s, ME, 20_000)).replace(
      '<NmbItem>Insumo</NmbItem>',
      '<NmbItem>Insumos</NmbItem>',
    );
    const other = signed(s, invoice(s, '77777777-7', 5_000));
    const env = readReceivedEnvelope(intercambio(s, [good, forged, other], ME), {
      rutReceptor: ME,
      siiPublicKeys: siiKeysOf(s),
    });
    expect(env.results.map((r) => (r.ok ? 'ok' : r.refusal.reason))).to.deep.equal([
      'ok',
      'firma_dte_invalida',
      'dte_para_otra_empresa',
    ]);
    expect(env).to.include({ kind: 'EnvioDTE', setId: 'SetDoc', rutEmisor: s.rut });
    expect(env.digest).to.match(/^[A-Za-z0-9+/]+=*$/);
    const xml = buildRespuestaRecepcion(
      {
        idRespuesta: 42,
        nmbEnvio: 'envio.xml',
        fchRecep: new Date(),
        codEnvio: 7,
        envioDteId: env.setId!,
        digest: env.digest!,
        rutEmisor: env.rutEmisor,
        rutReceptor: ME,
        estado: 0,
        documentos: env.results.map((r) => ({
          ...r.ref,
          estado: r.ok ? 0 : estadoRecepDteOf(r.refusal.reason),
        })),
      },
      signer,
    );
    const text = xml.toString('latin1');
    expect(text.startsWith('<?xml version="1.0" encoding="ISO-8859-1"?>')).to.equal(true);
    expect([...text.matchAll(/<EstadoRecepDTE>(\d+)<\/EstadoRecepDTE>/g)].map((m) => m[1])).to.deep.equal([
      '0',
      '1',
      '3',
    ]);
    expect(text).to.contain('<EstadoRecepEnv>0</EstadoRecepEnv>');
    expect(text).to.contain('<NroDTE>3</NroDTE>');
    const v = xsd(xml, 'RespuestaEnvioDTE_v10.xsd');
    expect(v.ok, v.output).to.equal(true);
    const sig = xmlsec(xml, ['Resultado']);
    expect(sig.ok, sig.output).to.equal(true);
    // a changed byte breaks the signature
    const tampered = Buffer.from(text.replace('<EstadoRecepDTE>1<', '<EstadoRecepDTE>0<'), 'latin1');
    expect(xmlsec(tampered, ['Resultado']).ok).to.equal(false);
  });

  it('ResultadoDTE: the commercial approval per document (0 accepted, 2 rejected with CodRchDsc)', () => {
    const ref = {
      tipoDte: 33,
      folio: 5,
      fchEmis: '2026-11-20',
      rutEmisor: s.rut,
      rutReceptor: ME,
      mntTotal: 11_900,
    };
    const xml = buildRespuestaResultado(
      {
        idRespuesta: 43,
        documentos: [
          { ...ref, codEnvio: 7, estado: 0 },
          { ...ref, folio: 6, codEnvio: 7, estado: 2, glosa: 'Mercaderías no solicitadas', codRchDsc: -1 },
        ],
      },
      signer,
    );
    expect(xml.toString('latin1')).to.contain('<NroDetalles>2</NroDetalles>');
    expect(xml.toString('latin1')).to.contain('Mercaderías'.normalize('NFC'));
    const v = xsd(xml, 'RespuestaEnvioDTE_v10.xsd');
    expect(v.ok, v.output).to.equal(true);
    const sig = xmlsec(xml, ['Resultado']);
    expect(sig.ok, sig.output).to.equal(true);
  });

  it('EnvioRecibos: each Recibo and the SetRecibos signed, with the fixed declaration of Ley 19.983', () => {
    const ref = {
      tipoDte: 33,
      folio: 5,
      fchEmis: '2026-11-20',
      rutEmisor: s.rut,
      rutReceptor: ME,
      mntTotal: 11_900,
    };
    const xml = buildEnvioRecibos(
      [
        { ...ref, recinto: 'Bodega Central, Ñuñoa' },
        { ...ref, folio: 6, recinto: 'Oficina' },
      ],
      signer,
    );
    const text = xml.toString('latin1');
    expect(text).to.contain(`<Declaracion>${DECLARACION_RECIBO}</Declaracion>`);
    expect(text).to.contain('<RutFirma>11111111-1</RutFirma>');
    const v = xsd(xml, 'EnvioRecibos_v10.xsd');
    expect(v.ok, v.output).to.equal(true);
    const ids = ['DocumentoRecibo', 'SetRecibos'];
    const setSig = xmlsec(xml, ids, "/*[local-name()='EnvioRecibos']/*[local-name()='Signature']");
    expect(setSig.ok, setSig.output).to.equal(true);
    for (const n of [1, 2]) {
      const r = xmlsec(xml, ids, `(//*[local-name()='Recibo'])[${n}]/*[local-name()='Signature']`);
      expect(r.ok, `Recibo ${n}: ${r.output}`).to.equal(true);
    }
  });
});
