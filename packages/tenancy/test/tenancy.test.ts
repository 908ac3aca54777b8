/**
 * The tenancy rules the api's routes rely on, against a migrated PostgreSQL schema: a company's
 * current branches (never another company's, never a closed one), the production gates of an
 * organization and of each document type, the organization's emitter RUT, RUT normalization and
 * the API key scopes.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { ApiError } from '@dte/error-catalog';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import { insertTenant } from '../../../test/support/tenant-fixture';
import {
  SCOPES,
  assertCafTypeCertified,
  assertOrganizationHasRut,
  currentBranch,
  isScope,
  listCurrentBranches,
  normalizeRut,
  productionIssueGate,
} from '../src';
import { refusal } from '../../../test/support/refusal';

describe('tenancy: branches, production gates, RUT and scopes', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  before(async () => {
    db = await migratedDatabase('tenancy');
  });
  after(async () => db?.cleanup());

  describe('branches (sucursales)', () => {
    it("gives a company's current branch, and dte.sucursal.not_found for a closed one, another company's or a malformed id", async () => {
      const a = await insertTenant(db.dataSource, {
        branches: [
          { nombre: 'Casa Matriz', direccion: 'Av. Uno 1', comuna: 'Santiago', codigoSii: 81_234_567 },
          { nombre: 'Bodega', direccion: 'Calle Dos 2', comuna: 'Maipu', closed: true },
        ],
      });
      const b = await insertTenant(db.dataSource, {
        branches: [{ nombre: 'Otra', direccion: 'X 1', comuna: 'Talca' }],
      });
      const [matriz, bodega] = a.branchIds;
      expect(await currentBranch(db.dataSource, a.companyId, matriz)).to.deep.equal({
        id: matriz,
        rut_emisor: a.rut,
        nombre: 'Casa Matriz',
        codigo_sii: 81_234_567,
        direccion: 'Av. Uno 1',
        comuna: 'Santiago',
      });
      for (const [company, id] of [
        [a.companyId, bodega], // closed
        [a.companyId, b.branchIds[0]], // another company's
        [b.companyId, matriz], // the other way round
        [a.companyId, 'nope'], // not a uuid: no query, the same answer
        [a.companyId, randomUUID()], // nobody's
      ]) {
        const err = await refusal(currentBranch(db.dataSource, company, id), ApiError);
        expect(err.code).to.equal('dte.sucursal.not_found');
        expect(err.detail).to.deep.equal({ sucursal_id: id });
      }
    });

    it("lists the current branches of one company, or of the whole organization, never another organization's", async () => {
      const a = await insertTenant(db.dataSource, {
        branches: [
          { nombre: 'Sur', direccion: 'S 1', comuna: 'Temuco', codigoSii: 2 },
          { nombre: 'Casa Matriz', direccion: 'Av. Uno 1', comuna: 'Santiago' },
          { nombre: 'Cerrada', direccion: 'C 1', comuna: 'Arica', closed: true },
        ],
      });
      await insertTenant(db.dataSource, {
        branches: [{ nombre: 'Ajena', direccion: 'A 1', comuna: 'Talca' }],
      });
      const list = await listCurrentBranches(db.dataSource, a.organizationId, a.companyId);
      // the branch without an SII code (the head office) first, then by code
      expect(list.data.map((r) => r.nombre)).to.deep.equal(['Casa Matriz', 'Sur']);
      expect(list.next_cursor).to.equal(null);
      const whole = await listCurrentBranches(db.dataSource, a.organizationId, null);
      expect(whole.data.map((r) => r.nombre)).to.deep.equal(['Casa Matriz', 'Sur']);
      const foreign = await listCurrentBranches(db.dataSource, randomUUID(), a.companyId);
      expect(foreign.data).to.deep.equal([]);
    });
  });

  describe('production gates', () => {
    it('lets certification through without looking at the organization', async () => {
      const t = await insertTenant(db.dataSource, { prodEnabled: false });
      const check = await productionIssueGate(db.dataSource, 'cert', t.companyId);
      expect(() => check(33)).not.to.throw();
      expect(() => check(46)).not.to.throw();
      await assertCafTypeCertified(db.dataSource, 'cert', t.companyId, 33);
    });

    it('refuses production emission for an organization not enabled, before the type is known', async () => {
      const t = await insertTenant(db.dataSource, { prodEnabled: false, prodTipos: [33] });
      const err = await refusal(productionIssueGate(db.dataSource, 'prod', t.companyId), ApiError);
      expect(err.code).to.equal('onboarding_production_not_authorized');
      expect(err.detail).to.deep.equal({ sii_env: 'prod' });
    });

    it('lets an enabled organization issue only its certified types, with the factura de compra its own code', async () => {
      const t = await insertTenant(db.dataSource, { prodEnabled: true, prodTipos: [33, 61] });
      const check = await productionIssueGate(db.dataSource, 'prod', t.companyId);
      expect(() => check(33)).not.to.throw();
      expect(() => check(61)).not.to.throw();
      const notCertified = await refusal(() => check(34), ApiError);
      expect(notCertified.code).to.equal('dte.type.prod_not_certified');
      expect(notCertified.detail).to.deep.equal({ tipoDte: 34, certified: [33, 61] });
      const compra = await refusal(() => check(46), ApiError);
      expect(compra.code).to.equal('dte.46.prod_not_certified');
    });

    it('stores and asks production folios only for certified types of an enabled organization', async () => {
      const enabled = await insertTenant(db.dataSource, { prodEnabled: true, prodTipos: [33] });
      await assertCafTypeCertified(db.dataSource, 'prod', enabled.companyId, 33);
      const other = await refusal(
        assertCafTypeCertified(db.dataSource, 'prod', enabled.companyId, 61),
        ApiError,
      );
      expect(other.code).to.equal('caf.type_not_prod_certified');
      expect(other.detail).to.deep.equal({ tipoDte: 61, certified: [33] });
      // certified types of an organization not enabled do not count: nothing is certified
      const closed = await insertTenant(db.dataSource, { prodEnabled: false, prodTipos: [33] });
      const shut = await refusal(
        assertCafTypeCertified(db.dataSource, 'prod', closed.companyId, 33),
        ApiError,
      );
      expect(shut.code).to.equal('caf.type_not_prod_certified');
      expect(shut.detail).to.deep.equal({ tipoDte: 33, certified: [] });
      // an unknown company is never enabled
      const unknown = await refusal(
        assertCafTypeCertified(db.dataSource, 'prod', randomUUID(), 33),
        ApiError,
      );
      expect(unknown.code).to.equal('caf.type_not_prod_certified');
    });
  });

  it('answers org.rut_missing for an organization without a company, and nothing once it has one', async () => {
    const [bare] = await db.dataSource.query(
      "INSERT INTO organizations (name) VALUES ('sin rut') RETURNING id",
    );
    const err = await refusal(assertOrganizationHasRut(db.dataSource, bare.id), ApiError);
    expect(err.code).to.equal('org.rut_missing');
    const t = await insertTenant(db.dataSource);
    await assertOrganizationHasRut(db.dataSource, t.organizationId);
  });

  it('normalizes a RUT written with dots, leading zeros or a lower-case k, and refuses a wrong check digit', () => {
    expect(normalizeRut('76.086.428-5')).to.equal('76086428-5');
    expect(normalizeRut('076086428-5')).to.equal('76086428-5');
    expect(normalizeRut('760864285')).to.equal('76086428-5');
    expect(normalizeRut(' 12.345.670-k ')).to.equal('12345670-K');
    expect(normalizeRut('76086428-4')).to.equal(null);
    expect(normalizeRut('76086428')).to.equal(null);
    expect(normalizeRut('abc-5')).to.equal(null);
  });

  it("knows the spec's scopes and no others (no wildcard, no upper case)", () => {
    expect(SCOPES).to.include.members(['dte:read', 'dte:write', 'webhook:read', 'webhook:write']);
    expect(isScope('dte:write')).to.equal(true);
    for (const s of ['dte:admin', 'DTE:READ', 'dte:*', '', 'webhook']) expect(isScope(s), s).to.equal(false);
  });
});
