/**
 * The CAF store (src/cafs.ts) against a migrated schema, with CAFs signed by the SII simulator's
 * keys: only a CAF the SII signed, of the key's environment and company, becomes folios; ranges
 * never overlap (a deleted CAF keeps its range); the inventory counts what is left; a CAF with
 * accepted or ceded documents stays. The HTTP answers over these: services/api/test/caf.test.ts.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { createTestCaf, createTestSiiKey, santiagoDate, type SiiKey } from '@dte/engine';
import type { Principal } from '@dte/tenancy';
import { insertCertificateRow, insertQueuedDocument } from '../../../test/support/tenant-fixture';
import { allocateFolioNow, cafInventory, deleteCaf, uploadCaf } from '../src';
import { companyWithCertificate, startFoliosHarness, type FoliosHarness } from './support/folios-deps';
import { refusal } from '../../../test/support/refusal';

describe('CAF store: upload, inventory, delete', function () {
  this.timeout(120_000);
  let h: FoliosHarness;
  before(async () => {
    h = await startFoliosHarness({}, 'cafs');
  });
  after(async () => h?.close());

  const xml = (rut: string, tipoDte: number, desde: number, hasta: number, siiKey?: SiiKey) =>
    Buffer.from(
      createTestCaf({
        siiKey: siiKey ?? h.sim.siiKeys.cert!,
        rutEmisor: rut,
        razonSocial: 'EMPRESA DE PRUEBA',
        tipoDte,
        desde,
        hasta,
        fechaAutorizacion: santiagoDate(new Date()),
        keyBits: 512,
      }),
      'latin1',
    );
  const upload = (p: Principal, file: Buffer, tipoEsperado?: number) =>
    uploadCaf(
      h.deps.dataSource,
      h.deps.keys,
      p,
      { xml: file, tipoEsperado },
      new Date(),
      h.deps.config.siiCafKeys,
    );

  it('stores a CAF signed by the SII, and refuses a forged one, another environment, another emitter, a wrong type', async () => {
    const { tenant, principal } = await companyWithCertificate(h);
    const row = await upload(principal, xml(tenant.rut, 33, 1, 8), 33);
    expect(row).to.include({ tipo_dte: 33, rut_emisor: tenant.rut, environment: 'cert', source: 'upload' });
    // the stored range gives folios
    const key = { ...tenant, tipoDte: 33 };
    expect((await allocateFolioNow(h.deps.dataSource, key, new Date())).folio).to.equal(1);

    // signed by a key that is not the SII's: never folios
    const forged = await refusal(upload(principal, xml(tenant.rut, 33, 100, 110, createTestSiiKey(100))));
    expect(forged.code).to.equal('caf.parse_error');
    const prod = await refusal(upload(principal, xml(tenant.rut, 33, 200, 210, h.sim.siiKeys.prod!)));
    expect(prod.code).to.equal('sii_env_mismatch');
    expect(prod.detail).to.deep.include({ caf: 'prod', credencial: 'cert' });
    const foreign = await refusal(upload(principal, xml('76086428-5', 33, 300, 310)));
    expect(foreign.code).to.equal('emisor_rut_mismatch');
    const wrongTipo = await refusal(upload(principal, xml(tenant.rut, 34, 1, 5), 33));
    expect(wrongTipo.code).to.equal('caf.wrong_tipo');
    const [{ n }] = await h.deps.dataSource.query(
      'SELECT count(*)::int AS n FROM cafs WHERE company_id = $1',
      [tenant.companyId],
    );
    expect(n).to.equal(1);
  });

  it('refuses an overlapping range, also of a deleted CAF, and a CAF before any certificate', async () => {
    const { tenant, principal } = await companyWithCertificate(h);
    const first = await upload(principal, xml(tenant.rut, 33, 1, 10));
    const overlap = await refusal(upload(principal, xml(tenant.rut, 33, 5, 15)));
    expect(overlap.code).to.equal('caf.duplicate');
    expect(overlap.detail).to.deep.include({ desde: 5, hasta: 15, existing: { desde: 1, hasta: 10 } });
    // another type or the next range is fine
    await upload(principal, xml(tenant.rut, 34, 1, 10));
    await upload(principal, xml(tenant.rut, 33, 11, 20));
    await deleteCaf(h.deps.dataSource, h.deps.cafDocuments, principal, first.id, new Date());
    const again = await refusal(upload(principal, xml(tenant.rut, 33, 1, 10)));
    expect(again.code).to.equal('caf.duplicate');

    const bare = await companyWithCertificate(h);
    await h.deps.dataSource.query('UPDATE certificates SET deleted_at = now() WHERE organization_id = $1', [
      bare.tenant.organizationId,
    ]);
    const noCert = await refusal(upload(bare.principal, xml(bare.tenant.rut, 33, 1, 10)));
    expect(noCert.code).to.equal('caf.no_certificate');
  });

  it('counts the folios left per type with the low_folios alert, for the key’s company only', async () => {
    const { tenant, principal } = await companyWithCertificate(h);
    await upload(principal, xml(tenant.rut, 33, 1, 6));
    await upload(principal, xml(tenant.rut, 61, 1, 50));
    const other = await companyWithCertificate(h);
    await upload(other.principal, xml(other.tenant.rut, 33, 1, 100));
    for (let i = 0; i < 2; i++)
      await allocateFolioNow(h.deps.dataSource, { ...tenant, tipoDte: 33 }, new Date());
    const inv = await cafInventory(h.deps.dataSource, principal, 5, new Date());
    expect(inv.summary.map((s) => [s.tipo_dte, s.remaining, s.next_folio, s.alerts])).to.deep.equal([
      [33, 4, 3, ['low_folios']],
      [61, 50, 1, []],
    ]);
    expect(inv.data.every((c) => c.rut_emisor === tenant.rut)).to.equal(true);
  });

  it('keeps a CAF whose documents the SII accepted, deletes one without, and answers another organization’s like a missing one', async () => {
    const { tenant, principal } = await companyWithCertificate(h);
    const used = await upload(principal, xml(tenant.rut, 33, 1, 10));
    const unused = await upload(principal, xml(tenant.rut, 33, 11, 20));
    const certificateId = await insertCertificateRow(h.deps.dataSource, tenant, { isDefault: false });
    const doc = await insertQueuedDocument(h.deps.dataSource, tenant, {
      tipoDte: 33,
      folio: 1,
      cafId: used.id,
      certificateId,
    });
    await h.deps.dataSource.query(`UPDATE dtes SET sii_status = 'EPR' WHERE id = $1`, [doc.id]);
    const kept = await refusal(
      deleteCaf(h.deps.dataSource, h.deps.cafDocuments, principal, used.id, new Date()),
    );
    expect(kept.code).to.equal('caf.has_accepted_dtes');
    expect(kept.detail).to.deep.equal({ accepted: 1 });

    const other = await companyWithCertificate(h);
    for (const id of [unused.id, randomUUID(), 'no-uuid']) {
      const err = await refusal(
        deleteCaf(h.deps.dataSource, h.deps.cafDocuments, other.principal, id, new Date()),
      );
      expect(err.code, id).to.equal('caf.not_found');
    }
    const deleted = await deleteCaf(h.deps.dataSource, h.deps.cafDocuments, principal, unused.id, new Date());
    expect(deleted.deleted_at).not.to.equal(null);
    const gone = await refusal(
      deleteCaf(h.deps.dataSource, h.deps.cafDocuments, principal, unused.id, new Date()),
    );
    expect(gone.code).to.equal('caf.not_found');
  });
});
