/**
 * The BHE service (src/bhe.ts) against a migrated PostgreSQL schema and the SII simulator, with a
 * real .p12 sealed under a local master key: the SII numbers the BHE and holds the retention the
 * service computed; the Idempotency-Key answers it again without a second BHE at the SII; a
 * refused body reaches nothing; the annulment window decides between annulling at the SII and
 * refusing with nothing sent. The HTTP routes over it: test/boletas/bhe.test.ts.
 */
import { expect } from 'chai';
import { randomBytes, randomUUID } from 'node:crypto';
import { createTestP12, santiagoDate } from '@dte/engine';
import { uploadCertificate } from '@dte/certificates';
import { LocalKeyWrapper } from '@dte/secrets';
import { SiiClient, simulatorEndpoints } from '@dte/sii-client';
import { startSiiSimulator, type RunningSimulator } from '@dte/sii-simulator';
import type { Principal } from '@dte/tenancy';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import { apiKeyPrincipal, insertTenant, type Tenant } from '../../../test/support/tenant-fixture';
import { annulBhe, issueBhe, type BheBody, type BheDeps } from '../src';
import { refusal } from '../../../test/support/refusal';

describe('bhe: issue and annul at the SII', function () {
  this.timeout(120_000);
  let db: MigratedDatabase;
  let sim: RunningSimulator;
  let d: BheDeps;
  let t: Tenant;
  let principal: Principal;
  const today = santiagoDate(new Date());

  before(async () => {
    db = await migratedDatabase('bhe');
    // any authenticated RUT may act for its own company (no enrolment step)
    sim = await startSiiSimulator({ port: 0, autoEnrol: true, cafKeyBits: 512 });
    const keys = new LocalKeyWrapper({ k1: randomBytes(32) }, 'k1');
    d = {
      db: db.dataSource,
      keys,
      sii: new SiiClient({ endpoints: simulatorEndpoints(sim.url), timeoutMs: 10_000 }),
    };
    t = await insertTenant(db.dataSource);
    await uploadCertificate(
      db.dataSource,
      keys,
      t.organizationId,
      { p12: createTestP12({ rut: t.rut, password: 'clave' }), password: 'clave', label: 'honorarios' },
      new Date(),
    );
    principal = apiKeyPrincipal(t, ['dte:write']);
  });
  after(async () => {
    await sim?.close();
    await db?.cleanup();
  });

  const body = (over: Partial<BheBody> = {}): BheBody => ({
    rut_receptor: '76086428-5',
    razon_social_receptor: 'Cliente SpA',
    fecha_emision: today,
    descripcion: 'Asesoría contable',
    monto_bruto: 500_000,
    ...over,
  });
  const atSii = async (numero: number) =>
    (await fetch(`${sim.url}/cert/bhe/${t.rut}/${numero}`).then((r) => r.json())) as Record<string, unknown>;
  const count = async () =>
    Number(
      (await db.dataSource.query('SELECT count(*) AS n FROM bhes WHERE company_id = $1', [t.companyId]))[0].n,
    );

  it('is numbered by the SII with the retention the service computed, and its key answers it again without a second BHE', async () => {
    const key = randomUUID();
    const rec = await issueBhe(
      d,
      principal,
      { body: body(), idempotencyKey: key, certIdHeader: undefined },
      new Date(),
    );
    expect(rec).to.include({ rut_emisor: t.rut, monto_bruto: 500_000, estado: 'vigente', anulada: false });
    const retencion = rec.monto_retencion;
    expect(retencion).to.equal(Math.round((500_000 * rec.tasa_retencion) / 100));
    expect(rec.monto_liquido).to.equal(500_000 - retencion);
    expect(await atSii(rec.numero as number)).to.include({
      estado: 'VIGENTE',
      retencion,
      montoBruto: 500_000,
    });

    const again = await issueBhe(
      d,
      principal,
      { body: body(), idempotencyKey: key, certIdHeader: undefined },
      new Date(),
    );
    expect(again).to.deep.equal(rec);
    expect(await count()).to.equal(1);
    const conflict = await refusal(
      issueBhe(
        d,
        principal,
        { body: body({ monto_bruto: 1 }), idempotencyKey: key, certIdHeader: undefined },
        new Date(),
      ),
    );
    expect(conflict.code).to.equal('idempotency_conflict');
    expect(conflict.detail).to.deep.equal({ existingDteId: rec.id });
    // the next BHE at the SII is the next number: the replays asked for none
    const next = await issueBhe(
      d,
      principal,
      { body: body(), idempotencyKey: randomUUID(), certIdHeader: undefined },
      new Date(),
    );
    expect(next.numero).to.equal((rec.numero as number) + 1);
  });

  it('refuses, writing nothing and asking the SII nothing: itself as receiver, a wrong declared retention, another year', async () => {
    const before = await count();
    const self = await refusal(
      issueBhe(
        d,
        principal,
        { body: body({ rut_receptor: t.rut }), idempotencyKey: randomUUID(), certIdHeader: undefined },
        new Date(),
      ),
    );
    expect(self.code).to.equal('bhe.receptor.tipo_invalid');
    const wrong = await refusal(
      issueBhe(
        d,
        principal,
        { body: body({ retencion: 1 }), idempotencyKey: randomUUID(), certIdHeader: undefined },
        new Date(),
      ),
    );
    expect(wrong.code).to.equal('bhe.retencion.mismatch');
    expect((wrong.detail as { expected: number; declared: number }).declared).to.equal(1);
    const lastYear = `${Number(today.slice(0, 4)) - 1}${today.slice(4)}`;
    const year = await refusal(
      issueBhe(
        d,
        principal,
        { body: body({ fecha_emision: lastYear }), idempotencyKey: randomUUID(), certIdHeader: undefined },
        new Date(),
      ),
    );
    expect(year.code).to.equal('validation_failed');
    expect(await count()).to.equal(before);
    // the SII gave no number to any of them: the next BHE takes the one after the last issued
    const [last] = await db.dataSource.query(
      'SELECT max(numero_sii)::int AS n FROM bhes WHERE company_id = $1',
      [t.companyId],
    );
    const next = await issueBhe(
      d,
      principal,
      { body: body(), idempotencyKey: randomUUID(), certIdHeader: undefined },
      new Date(),
    );
    expect(next.numero).to.equal(last.n + 1);
  });

  it('annuls at the SII within the immediate window (once), and refuses after the limit with nothing sent', async () => {
    const rec = await issueBhe(
      d,
      principal,
      { body: body(), idempotencyKey: randomUUID(), certIdHeader: undefined },
      new Date(),
    );
    const annulled = await annulBhe(d, principal, rec.id, 'emitida por error', undefined, new Date());
    expect(annulled).to.include({ estado: 'anulada', anulada: true, motivo_anulacion: 'emitida por error' });
    expect(await atSii(rec.numero as number)).to.include({ estado: 'ANULADA' });
    // annulling it again answers it as it is
    expect(await annulBhe(d, principal, rec.id, 'otra vez', undefined, new Date())).to.deep.equal(annulled);

    // a BHE of two years ago (its row moved back): past 1 March of the next year
    const old = await issueBhe(
      d,
      principal,
      { body: body(), idempotencyKey: randomUUID(), certIdHeader: undefined },
      new Date(),
    );
    const twoYearsAgo = `${Number(today.slice(0, 4)) - 2}-06-15`;
    await db.dataSource.query('UPDATE bhes SET fecha_emision = $2 WHERE id = $1', [old.id, twoYearsAgo]);
    const late = await refusal(annulBhe(d, principal, old.id, undefined, undefined, new Date()));
    expect(late.code).to.equal('bhe.plazo_anulacion.expired');
    expect(late.detail).to.deep.equal({
      fecha_emision: twoYearsAgo,
      limite: `${Number(today.slice(0, 4)) - 1}-03-01`,
    });
    expect(await atSii(old.numero as number)).to.include({ estado: 'VIGENTE' });

    // another company's key does not find it
    const other = await insertTenant(db.dataSource);
    const foreign = await refusal(
      annulBhe(
        d,
        { ...principal, organizationId: other.organizationId, companyId: other.companyId },
        rec.id,
        undefined,
        undefined,
        new Date(),
      ),
    );
    expect(foreign.code).to.match(/not_found/);
  });
});
