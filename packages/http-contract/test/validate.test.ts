/**
 * validateBody over the JSON Schemas of schemas/http: a body that matches comes back as it is; one
 * that does not is 400 validation_failed with one issue per problem (JSON pointer and message),
 * including the RUT's modulo-11 check digit and $refs between schema files.
 */
import { expect } from 'chai';
import { ApiError, httpStatusOf } from '@dte/error-catalog';
import {
  BASE_PATH,
  compileHttpSchemas,
  listHttpSchemas,
  loadHttpSchema,
  SCHEMA_ID_BASE,
  validateBody,
} from '../src';

function refusal(f: () => unknown): ApiError {
  try {
    f();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

const bhe = {
  rut_receptor: '76086428-5',
  fecha_emision: '2026-03-02',
  descripcion: 'Asesoría contable marzo',
  monto_bruto: 500_000,
};

describe('http-contract: validateBody over schemas/http', () => {
  it('compiles every schema of schemas/http up front (what the api does before it listens)', () => {
    expect(compileHttpSchemas()).to.equal(listHttpSchemas().length);
  });

  it('returns a body that matches its schema unchanged', () => {
    const body = { ...bhe, retencion_por: 'receptor' };
    expect(validateBody('bhe-emission.schema.json', body)).to.equal(body);
  });

  it('answers validation_failed (400) with one issue per problem: missing, unknown, out of bounds, wrong enum', () => {
    const err = refusal(() =>
      validateBody('caf-request.schema.json', { tipo_dte: 35, cantidad: 0, extra: true, rut_emisor: '1-9' }),
    );
    expect(err.code).to.equal('validation_failed');
    expect(httpStatusOf(err.code)).to.equal(400);
    const paths = err.issues!.map((i) => i.path).sort();
    expect(paths).to.deep.equal(['/cantidad', '/extra', '/tipo_dte']);
    for (const issue of err.issues!) expect(issue.message).to.be.a('string').and.not.equal('');

    const missing = refusal(() => validateBody('caf-request.schema.json', { tipo_dte: 33 }));
    expect(missing.issues).to.deep.equal([
      { path: '/cantidad', message: "should have required property 'cantidad'" },
    ]);

    const notAnObject = refusal(() => validateBody('caf-request.schema.json', [1, 2]));
    expect(notAnObject.issues!.map((i) => i.path)).to.deep.equal(['/']);
  });

  it('checks the RUT check digit (format rut), also through a $ref to common.schema.json', () => {
    // 76086428-5 is valid; the same body with another check digit matches the pattern only
    expect(() =>
      validateBody('branch-create.schema.json', {
        rut_emisor: '76086428-5',
        nombre: 'A',
        direccion: 'B',
        comuna: 'C',
      }),
    ).not.to.throw();
    const own = refusal(() =>
      validateBody('branch-create.schema.json', {
        rut_emisor: '76086428-4',
        nombre: 'A',
        direccion: 'B',
        comuna: 'C',
      }),
    );
    expect(own.issues).to.deep.equal([{ path: '/rut_emisor', message: 'should match format "rut"' }]);

    const viaRef = refusal(() =>
      validateBody('bhe-emission.schema.json', { ...bhe, rut_receptor: '76086428-K' }),
    );
    expect(viaRef.issues!.map((i) => i.path)).to.deep.equal(['/rut_receptor']);
    // K is a check digit like any other: 12345670-K is valid
    expect(() =>
      validateBody('bhe-emission.schema.json', { ...bhe, rut_receptor: '12345670-K' }),
    ).not.to.throw();
    // a date of the calendar only
    const date = refusal(() =>
      validateBody('bhe-emission.schema.json', { ...bhe, fecha_emision: '2026-02-30' }),
    );
    expect(date.issues!.map((i) => i.path)).to.deep.equal(['/fecha_emision']);
  });

  it('refuses a schema it does not hold (a programming error, not a 400)', () => {
    expect(() => validateBody('no-such.schema.json', {})).to.throw(Error, /no schema no-such.schema.json/);
  });

  it('holds every schema of schemas/http under its $id, and the base path of the spec', () => {
    const files = listHttpSchemas();
    expect(files).to.include.members([
      'common.schema.json',
      'dte-emission.schema.json',
      'caf-request.schema.json',
    ]);
    for (const f of files) expect(loadHttpSchema(f).$id, f).to.equal(SCHEMA_ID_BASE + f);
    expect(BASE_PATH).to.equal('/api/v1');
  });
});
