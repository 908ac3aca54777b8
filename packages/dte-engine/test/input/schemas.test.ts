import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEmissionAjv, emissionSchemas } from '../../src/input';
import { EMISOR, RECEPTOR, factura } from './fixtures';

const DIR = join(__dirname, '../../../../schemas/http');

/** Keywords of the OpenAPI 3.0 Schema Object, plus the JSON Schema structure the bundler resolves. */
const OPENAPI_30_KEYWORDS = new Set([
  'title',
  'multipleOf',
  'maximum',
  'minimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxProperties',
  'minProperties',
  'required',
  'enum',
  'type',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'items',
  'properties',
  'additionalProperties',
  'description',
  'format',
  'default',
  'nullable',
  '$ref',
]);
const STRUCTURE = new Set(['$schema', '$id', 'definitions']);

function keywordsOutsideOpenApi(schema: unknown, path: string, out: string[]): void {
  if (typeof schema !== 'object' || schema === null) return;
  for (const [key, value] of Object.entries(schema)) {
    // x-…: an OpenAPI specification extension (x-examples: the body's named examples)
    if (key.startsWith('x-')) continue;
    if (!OPENAPI_30_KEYWORDS.has(key) && !STRUCTURE.has(key)) out.push(`${path}/${key}`);
    if (key === 'properties' || key === 'definitions') {
      for (const [name, sub] of Object.entries(value as object))
        keywordsOutsideOpenApi(sub, `${path}/${key}/${name}`, out);
    } else if (key === 'items' || key === 'additionalProperties' || key === 'not') {
      keywordsOutsideOpenApi(value, `${path}/${key}`, out);
    } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
      (value as unknown[]).forEach((sub, i) => keywordsOutsideOpenApi(sub, `${path}/${key}/${i}`, out));
    }
    if (key === 'type') expect(value, `${path}/type must be one type (OpenAPI 3.0)`).to.be.a('string');
  }
}

describe('input: JSON Schemas of schemas/http', () => {
  // the emission schemas (other files of schemas/http belong to other bodies)
  const files = [
    'common.schema.json',
    'dte-emission.schema.json',
    'dte-guia-despacho.schema.json',
    'dte-export.schema.json',
    'boleta-emission.schema.json',
    'dte-emission-request.schema.json',
  ];

  it('each file has $id, title and only keywords OpenAPI 3.0 takes (draft-07 compatible)', () => {
    expect(readdirSync(DIR)).to.include.members(files);
    for (const f of files) {
      const schema = JSON.parse(readFileSync(join(DIR, f), 'utf8'));
      expect(schema.$schema, f).to.equal('http://json-schema.org/draft-07/schema#');
      expect(schema.$id, f).to.equal(`https://dte.local/schemas/http/${f}`);
      expect(schema.title, f).to.be.a('string');
      const bad: string[] = [];
      keywordsOutsideOpenApi(schema, f, bad);
      expect(bad, f).to.deep.equal([]);
    }
  });

  it('the request schema takes exactly one shape per tipo_dte, and the boleta shape stands ready', () => {
    const ajv = createEmissionAjv();
    const request = ajv.getSchema(emissionSchemas.request.$id)!;
    const boleta = ajv.getSchema(emissionSchemas.boleta.$id)!;
    const guia = {
      tipo_dte: 52,
      rut_emisor: EMISOR.rut,
      receptor: RECEPTOR,
      fecha_emision: '2026-03-10',
      items: [{ nombre: 'X', cantidad: 1, precio_unitario: 0, exento: false, monto_item: 0 }],
      despacho: {
        ind_traslado: 5,
        direccion_origen: 'A',
        comuna_origen: 'B',
        direccion_destino: 'C',
        comuna_destino: 'D',
      },
    };
    const exp = {
      tipo_dte: 110,
      receptor: { razon_social: 'ACME' },
      items: [{ nombre: 'V', cantidad: 1, precio_unitario: 1, monto_item: 1 }],
      tpo_moneda: 'DOLAR USA',
      monto_total: 1,
    };
    for (const body of [factura(), guia, exp])
      expect(request(body), JSON.stringify(request.errors)).to.equal(true);
    expect(request(factura({ tipo_dte: 39 }))).to.equal(false);
    expect(request({ ...guia, despacho: undefined })).to.equal(false);
    const b = {
      tipo_dte: 39,
      rut_emisor: EMISOR.rut,
      fecha_emision: '2026-03-10',
      items: [{ nombre: 'Café', cantidad: 1, precio_unitario: 1190, exento: false, monto_item: 1190 }],
    };
    expect(boleta(b), JSON.stringify(boleta.errors)).to.equal(true);
    expect(boleta({ ...b, rut_emisor: '76086428-1' })).to.equal(false);
  });
});
