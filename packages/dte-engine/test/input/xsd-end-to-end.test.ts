import { expect } from 'chai';
import { buildEnvioDte, stampAndSignDte, type TipoDte } from '../../src';
import {
  buildDocument,
  santiagoDate,
  validateEmission,
  DOCUMENT_FOLIO_PATH,
  type EmisorProfile,
} from '../../src/input';
import { SENDER_RUT, cafFor, testCredentials } from '../support/credentials';
import { EMISOR_RUT } from '../support/documents';
import { xmllintSchema } from '../support/oracles';
import { RECEPTOR } from './fixtures';

/**
 * Emission bodies of every type, through validateEmission and buildDocument, then stamped and
 * signed by the XML side and checked by an independent oracle: system xmllint against the SII's
 * EnvioDTE_v10.xsd. This is where a mapping mistake (a missing required element, a value out of
 * an XSD type) would show.
 */
describe('input: bodies of every type come out schema-valid (xmllint, EnvioDTE_v10.xsd)', function () {
  this.timeout(120000);

  const now = new Date();
  const today = santiagoDate(now);
  const emisor: EmisorProfile = {
    rut: EMISOR_RUT,
    razonSocial: 'COMERCIAL ÑANDÚ & COMPAÑÍA LIMITADA',
    giro: 'Comercio de artículos de ferretería',
    acteco: [467300, 479100],
    direccion: 'Av. Libertador B. O’Higgins 1234',
    comuna: 'Santiago',
    ciudad: 'Santiago',
    sucursales: [
      { id: 7, nombre: 'Sucursal Norte', codigoSii: 76543210, direccion: 'Recoleta 55', comuna: 'Recoleta' },
    ],
  };
  const item = (over: Record<string, unknown>) => ({ nombre: 'Ítem', cantidad: 1, exento: false, ...over });
  const ref = (tipo: number, cod: number) => ({
    line_num: 1,
    tipo_doc_ref: tipo,
    folio_ref: 120,
    fecha_ref: today,
    cod_ref: cod,
    razon_ref: 'Según acuerdo “comercial”',
  });
  const base = { rut_emisor: EMISOR_RUT, receptor: { ...RECEPTOR }, fecha_emision: today };

  const bodies: Record<number, Record<string, unknown>> = {
    33: {
      ...base,
      tipo_dte: 33,
      forma_pago: 2,
      sucursal_id: 7,
      pagos: [{ fecha: today, monto: 5000, glosa: 'Primera cuota' }],
      items: [
        item({
          nombre: 'Taladro – percutor',
          cantidad: 2,
          unidad: 'UN',
          precio_unitario: 45990.5,
          descuento_pct: 7.5,
          monto_item: 85082,
          codigos: [{ tipo: 'INT1', valor: 'TAL-001' }],
        }),
        item({ nombre: 'Instalación…', precio_unitario: 15000, exento: true, monto_item: 15000 }),
      ],
      descuento_global: [
        { tipo: 'descuento', es_porcentaje: true, valor: 2.5, glosa: 'Cliente frecuente' },
        { tipo: 'recargo', es_porcentaje: false, valor: 990, aplica_exento: true },
      ],
      references: [{ line_num: 1, tipo_doc_ref: 'orden_compra', folio_ref: '4500012345', fecha_ref: today }],
    },
    34: {
      ...base,
      tipo_dte: 34,
      forma_pago: 1,
      items: [
        item({
          nombre: 'Curso de capacitación',
          cantidad: 3,
          precio_unitario: 120000,
          exento: true,
          monto_item: 360000,
        }),
      ],
      descuento_global: [{ tipo: 'descuento', es_porcentaje: true, valor: 10 }],
    },
    46: {
      ...base,
      tipo_dte: 46,
      forma_pago: 1,
      items: [
        item({ nombre: 'Cobre', cantidad: 125.5, unidad: 'KG', precio_unitario: 4200, monto_item: 527100 }),
      ],
    },
    52: {
      ...base,
      tipo_dte: 52,
      items: [item({ nombre: 'Sacos de cemento', cantidad: 40, precio_unitario: 6490, monto_item: 259600 })],
      despacho: {
        ind_traslado: 1,
        tipo_despacho: 2,
        direccion_origen: 'Bodega Quilicura 100',
        comuna_origen: 'Quilicura',
        direccion_destino: 'Obra Los Álamos 55',
        comuna_destino: 'Maipú',
        ciudad_destino: 'Santiago',
        transportista: { rut: '60803000-K', razon_social: 'Transportes Sur' },
        conductor: { rut: '14-0', nombre: 'Juan Pérez' },
        vehiculo: { patente: 'ABCD12' },
      },
    },
    56: {
      ...base,
      tipo_dte: 56,
      nd_reason: 'interese_moratorio_contractual',
      items: [item({ nombre: 'Intereses por mora', precio_unitario: 12345, monto_item: 12345 })],
      references: [ref(33, 3)],
    },
    61: {
      ...base,
      tipo_dte: 61,
      nc_reason: 'devolucion',
      items: [item({ nombre: 'Devolución cobre', cantidad: 10, precio_unitario: 4200, monto_item: 42000 })],
      references: [ref(46, 3)],
    },
    110: {
      tipo_dte: 110,
      fecha_emision: today,
      receptor: {
        razon_social: 'ACME Imports Inc.',
        direccion: '5th Avenue 1',
        ciudad: 'New York',
        extranjero: { num_id: 'US-1', nacionalidad: 225 },
      },
      items: [
        item({
          nombre: 'Vino tinto',
          cantidad: 120,
          unidad: 'BOT',
          precio_unitario: 7.35,
          monto_item: 882,
          exento: true,
        }),
      ],
      tpo_moneda: 'DOLAR USA',
      monto_total: 882,
      aduana: {
        cod_mod_venta: 1,
        cod_clau_venta: 1,
        tot_clau_venta: 882,
        cod_via_transp: 1,
        cod_pto_embarque: 906,
        cod_pto_desemb: 225,
        cod_pais_recep: 225,
        cod_pais_destin: 225,
        tot_bultos: 10,
        tipo_bultos: [{ cod_tpo_bultos: 75, cantidad_bultos: 10, marcas: 'ACME-NY' }],
        mnt_flete: 120.5,
        peso_bruto: 150.25,
        cod_unid_peso_bruto: 6,
      },
    },
    111: {
      tipo_dte: 111,
      fecha_emision: today,
      receptor: { razon_social: 'ACME Imports Inc.' },
      items: [item({ nombre: 'Flete adicional', precio_unitario: 55.5, monto_item: 55.5, exento: true })],
      tpo_moneda: 'DOLAR USA',
      monto_total: 55.5,
      otra_moneda: { tpo_moneda: 'PESO CL', tpo_cambio: 950.25, mnt_exe: 52739, mnt_total: 52739 },
      referencias: [{ tipo_doc_ref: 110, folio_ref: 9, fecha_ref: today, codigo_ref: 3, razon_ref: 'Flete' }],
    },
    112: {
      tipo_dte: 112,
      fecha_emision: today,
      receptor: { razon_social: 'Euro Buyer GmbH' },
      items: [
        item({ nombre: 'Devolución', cantidad: 2, precio_unitario: 10.25, monto_item: 20.5, exento: true }),
      ],
      tpo_moneda: 'EURO',
      monto_total: 20.5,
      referencias: [{ tipo_doc_ref: 110, folio_ref: 9, fecha_ref: today, codigo_ref: 1, razon_ref: 'Anula' }],
    },
  };

  it('holds its folio at DOCUMENT_FOLIO_PATH alone: a folio-0 draft with that path set is the document built with the folio', () => {
    const tipos = Object.keys(bodies).map(Number) as TipoDte[];
    for (const tipo of tipos) {
      const input = validateEmission(bodies[tipo], { now, emisor, tipos });
      const draft = JSON.parse(
        JSON.stringify(buildDocument(input, { emisor, folio: 0, exchangeRate: 1012.3456 })),
      ) as Record<string, unknown>;
      const direct = buildDocument(input, { emisor, folio: 4711, exchangeRate: 1012.3456 });
      let node = draft;
      for (const k of DOCUMENT_FOLIO_PATH.slice(0, -1)) node = node[k] as Record<string, unknown>;
      expect(node[DOCUMENT_FOLIO_PATH.at(-1)!], `type ${tipo}: the draft's folio`).to.equal(0);
      node[DOCUMENT_FOLIO_PATH.at(-1)!] = 4711;
      expect(draft, `type ${tipo}`).to.deep.equal(JSON.parse(JSON.stringify(direct)));
    }
  });

  it('33, 34, 46, 52, 56, 61, 110, 111, 112 validate, build, sign and pass xmllint', function () {
    const { credential } = testCredentials();
    const tipos = Object.keys(bodies).map(Number) as TipoDte[];
    const dtes = tipos.map((tipo, i) => {
      const input = validateEmission(bodies[tipo], { now, emisor, tipos });
      const doc = buildDocument(input, { emisor, folio: 1 + i, exchangeRate: 1012.3456 });
      return stampAndSignDte(doc, { caf: cafFor(tipo).caf, credential, timestamp: now });
    });
    const envio = buildEnvioDte(dtes, {
      rutEmisor: EMISOR_RUT,
      rutEnvia: SENDER_RUT,
      fchResol: '2014-08-22',
      nroResol: 0,
      credential,
      timestamp: now,
    });
    const r = xmllintSchema(envio);
    expect(r.ok, r.output).to.equal(true);
    const text = envio.toString('latin1');
    // a few hand-computed values as they reach the XML
    // 33: 2 x 45990.5 = 91981; descuento round(6898.575) = 6899; 85082. Globals: 2.5% of 85082 =
    // 2127.05 -> 2127 => neto 82955; exento 15000 + 990 = 15990; IVA round(15761.45) = 15761
    expect(text).to.contain(
      '<MntNeto>82955</MntNeto><MntExe>15990</MntExe><TasaIVA>19</TasaIVA><IVA>15761</IVA>',
    );
    expect(text).to.contain('<MntTotal>114706</MntTotal>');
    // typographic characters replaced before they reach ISO-8859-1
    expect(text).to.contain('Taladro - percutor');
    expect(text).to.contain('Instalación...');
    expect(text).to.contain('Según acuerdo "comercial"');
    // 111: 55.5 x 950.25 = 52738.875 -> 52739
    expect(text).to.contain('<MntTotOtrMnda>52739</MntTotOtrMnda>');
    // 112: 20.5 x 1012.3456 = 20753.0848 -> 20753
    expect(text).to.contain('<TpoCambio>1012.3456</TpoCambio>');
  });
});
