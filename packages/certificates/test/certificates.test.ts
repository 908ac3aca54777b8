/**
 * The certificate store and the signer chosen for a signature, against a migrated PostgreSQL
 * schema with real .p12 files sealed under a local master key: who may sign for a company, the
 * X-Cert-Id rules (Authentication 4), expiry, and the sealed file opening back into the same
 * signing credential. The HTTP routes over these: services/api/test/certificates.test.ts.
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { createTestP12 } from '@dte/engine';
import { LocalKeyWrapper } from '@dte/secrets';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import { insertCertificateRow, insertTenant, newRut } from '../../../test/support/tenant-fixture';
import {
  chooseSigningCertificate,
  listCertificates,
  loadSigningCredential,
  resolveActiveCertificate,
  resolveSigningCertificate,
  uploadCertificate,
} from '../src';
import { refusal } from '../../../test/support/refusal';

const DAY = 86_400_000;

/** The error catalog's error a call ends with (an ApiError, or the engine's ServiceError). */

describe('certificates: store and the signer chosen', function () {
  this.timeout(120_000);
  let db: MigratedDatabase;
  const keys = new LocalKeyWrapper({ k1: randomBytes(32) }, 'k1');

  before(async () => {
    db = await migratedDatabase('certificates');
  });
  after(async () => db?.cleanup());

  it("stores the company's own and its declared signers' certificates, refuses anyone else's, and opens the sealed file back", async () => {
    const signer = newRut();
    const t = await insertTenant(db.dataSource, { signerRuts: [signer] });
    const now = new Date();
    const own = await uploadCertificate(
      db.dataSource,
      keys,
      t.organizationId,
      { p12: createTestP12({ rut: t.rut, password: 'clave-1' }), password: 'clave-1', label: 'empresa' },
      now,
    );
    expect(own).to.include({ rut: t.rut, label: 'empresa', is_default: true });
    const person = await uploadCertificate(
      db.dataSource,
      keys,
      t.organizationId,
      { p12: createTestP12({ rut: signer, password: 'clave-2' }), password: 'clave-2', label: 'gerente' },
      now,
    );
    // the first current certificate is the default, the next is not
    expect(person).to.include({ rut: signer, is_default: false });

    const stranger = newRut();
    const mismatch = await refusal(
      uploadCertificate(
        db.dataSource,
        keys,
        t.organizationId,
        { p12: createTestP12({ rut: stranger, password: 'x' }), password: 'x', label: 'ajeno' },
        now,
      ),
    );
    expect(mismatch.code).to.equal('cert_subject_mismatch');
    expect(mismatch.detail).to.deep.include({ certificateRut: stranger });

    const wrongPassword = await refusal(
      uploadCertificate(
        db.dataSource,
        keys,
        t.organizationId,
        { p12: createTestP12({ rut: t.rut, password: 'bien' }), password: 'mal', label: 'x' },
        now,
      ),
    );
    expect(wrongPassword.code).to.equal('cert.invalid');

    // the secret is sealed: the row holds no .p12 bytes, and only the master key opens it
    const [row] = await db.dataSource.query('SELECT p12_sealed::text AS s FROM certificates WHERE id = $1', [
      own.id,
    ]);
    expect(row.s).not.to.include('clave-1');
    const credential = await loadSigningCredential(db.dataSource, keys, own.id);
    expect(credential.info.rut).to.equal(t.rut);
    expect(credential.info.fingerprintSha256).to.equal(own.fingerprint_sha256);
    const otherKey = new LocalKeyWrapper({ k1: randomBytes(32) }, 'k1');
    const err = await loadSigningCredential(db.dataSource, otherKey, own.id).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
  });

  it('chooses the signer: the only current one, X-Cert-Id among several, never another organization’s or an expired one', async () => {
    const t = await insertTenant(db.dataSource);
    const now = new Date();
    const opts = { path: 'dte' as const, now };

    const none = await refusal(resolveSigningCertificate(db.dataSource, t.organizationId, undefined, opts));
    expect(none.code).to.equal('cert_id_missing');
    expect(none.nextAction).to.equal('send_cert_id_header');
    const noneOther = await refusal(
      resolveSigningCertificate(db.dataSource, t.organizationId, undefined, { ...opts, path: 'other' }),
    );
    expect(noneOther.code).to.equal('cert_id_missing');
    expect(noneOther.nextAction).to.equal(undefined);

    const first = await insertCertificateRow(db.dataSource, t, { label: 'uno' });
    expect((await resolveSigningCertificate(db.dataSource, t.organizationId, undefined, opts)).id).to.equal(
      first,
    );

    const second = await insertCertificateRow(db.dataSource, t, { label: 'dos', isDefault: false });
    const ambiguous = await refusal(
      resolveSigningCertificate(db.dataSource, t.organizationId, undefined, opts),
    );
    expect(ambiguous.code).to.equal('cert_id_ambiguous');
    expect(ambiguous.detail).to.deep.equal({ certificateIds: [first, second] });
    // X-Cert-Id picks one, whatever its case or surrounding blanks
    expect(
      (await resolveSigningCertificate(db.dataSource, t.organizationId, ` ${second.toUpperCase()} `, opts))
        .id,
    ).to.equal(second);

    // another organization's certificate answers exactly like a missing one
    const other = await insertTenant(db.dataSource);
    const foreign = await insertCertificateRow(db.dataSource, other);
    for (const id of [foreign, randomUUID(), 'no-es-uuid']) {
      const e = await refusal(resolveSigningCertificate(db.dataSource, t.organizationId, id, opts));
      expect(e.code, id).to.equal('cert_not_found');
      expect(e.detail).to.deep.equal({ certificateId: id });
    }

    // an expired choice is cert_expired, with the date
    const expiredAt = new Date(now.getTime() - DAY);
    const expired = await insertCertificateRow(db.dataSource, t, {
      label: 'vencido',
      isDefault: false,
      notBefore: new Date(now.getTime() - 400 * DAY),
      notAfter: expiredAt,
    });
    const e = await refusal(resolveSigningCertificate(db.dataSource, t.organizationId, expired, opts));
    expect(e.code).to.equal('cert_expired');
    expect(e.detail).to.deep.equal({ expiredAt: expiredAt.toISOString(), certificateId: expired });
    // the pure rule over rows already read gives the same answers
    const rows = await listCertificates(db.dataSource, t.organizationId);
    expect(chooseSigningCertificate(rows, first, opts).id).to.equal(first);
    expect((await refusal(() => chooseSigningCertificate(rows, undefined, opts))).code).to.equal(
      'cert_id_ambiguous',
    );
  });

  it("lets a company's key see only the certificates of the company's own RUT and its signers", async () => {
    const signer = newRut();
    const t = await insertTenant(db.dataSource, { signerRuts: [signer] });
    // a second company of the same organization, with a signer of its own
    const otherRut = newRut();
    const [second] = await db.dataSource.query(
      `INSERT INTO companies (organization_id, rut, razon_social) VALUES ($1, $2, 'OTRA SPA') RETURNING id`,
      [t.organizationId, otherRut],
    );
    const own = await insertCertificateRow(db.dataSource, t, { label: 'empresa' });
    const person = await insertCertificateRow(db.dataSource, t, { rut: signer, isDefault: false });
    const outside = await insertCertificateRow(db.dataSource, t, { rut: otherRut, isDefault: false });
    const now = new Date();
    const ids = async (companyId: string | null) =>
      (await listCertificates(db.dataSource, t.organizationId, companyId)).map((r) => r.id);
    expect(await ids(t.companyId)).to.deep.equal([own, person]);
    expect(await ids(second.id)).to.deep.equal([outside]);
    expect(await ids(null)).to.deep.equal([own, person, outside]);
    const scoped = { path: 'dte' as const, now, companyId: second.id };
    expect((await resolveSigningCertificate(db.dataSource, t.organizationId, undefined, scoped)).id).to.equal(
      outside,
    );
    const hidden = await refusal(resolveSigningCertificate(db.dataSource, t.organizationId, own, scoped));
    expect(hidden.code).to.equal('cert_not_found');
    // the folio request's active certificate: the default, within the company's signers
    expect(
      (await resolveActiveCertificate(db.dataSource, t.organizationId, undefined, now, t.companyId)).id,
    ).to.equal(own);
    const noDefault = await refusal(
      resolveActiveCertificate(db.dataSource, t.organizationId, undefined, now, second.id),
    );
    expect(noDefault.code).to.equal('cert.missing');
  });
});
