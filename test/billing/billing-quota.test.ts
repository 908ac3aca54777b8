/**
 * Plans and monthly consumption (issue 32) over the real stack: the api with real PostgreSQL and
 * Redis, the SII simulator. The (N+1)th document of a month with limit N answers 402
 * billing.free_tier_exceeded with the counts and uses no folio; an idempotent replay counts once;
 * 50 concurrent emissions against a limit of 10 issue exactly 10; raising the limit lets the next
 * one through with the next folio; a boleta batch crossing the limit is refused whole.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { periodoOf } from '@dte/billing';
import { setPlan } from '@dte/accounts';
import { call, startTestApi, type TestApi } from '../../services/api/test/support/test-api';
import {
  body,
  boletaBody,
  emit,
  nextFolio,
  orgWithCafs,
  type DteOrg,
  today,
} from '../../services/api/test/dtes-fixtures';
import { enrol } from '../pipeline/harness';

describe('billing: the monthly allowance at emission (issue 32)', function () {
  this.timeout(240_000);
  let t: TestApi;

  before(async () => {
    // API_MAX_INFLIGHT_PER_ORG=0: all 50 concurrent emissions of one organization reach the
    // metering (the write cap's per-organization share, 48, would refuse two of them with 429)
    t = await startTestApi({
      env: { BOLETAS_ENABLED: 'cert', BHE_ENABLED: 'true', API_MAX_INFLIGHT_PER_ORG: '0' },
    });
  });
  after(async () => t?.close());

  const limitTo = (o: DteOrg, n: number | 'unlimited') =>
    setPlan(t.db.dataSource, {
      organization: o.orgId,
      plan: 'pro',
      monthlyLimit: String(n),
      env: 'cert',
      operator: 'Prueba',
    });
  const usage = async (o: DteOrg): Promise<number> => {
    const rows: { used: number }[] = await t.db.dataSource.query(
      `SELECT used FROM billing_usage WHERE organization_id = $1 AND sii_env = 'cert' AND periodo = $2`,
      [o.orgId, periodoOf(new Date())],
    );
    return rows[0]?.used ?? 0;
  };
  const dteCount = async (o: DteOrg): Promise<number> =>
    (
      await t.db.dataSource.query('SELECT count(*)::int AS n FROM dtes WHERE organization_id = $1', [o.orgId])
    )[0].n;

  it('the (N+1)th document answers 402 with usedThisMonth and limit, uses no folio; a replay counts once; raising the limit lets the next one through with the next folio', async () => {
    const o = await orgWithCafs(t, { tipos: [33] });
    await limitTo(o, 3);
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const idem = randomUUID();
      keys.push(idem);
      const res = await emit(t, o, body(33, o.rut), { idem });
      expect(res.status, res.text).to.equal(202);
      expect(res.body.folio).to.equal(i + 1);
    }
    expect(await usage(o)).to.equal(3);

    const refused = await emit(t, o, body(33, o.rut));
    expect(refused.status, refused.text).to.equal(402);
    expect(refused.body).to.include({ code: 'billing.free_tier_exceeded', next_action: 'upgrade_plan' });
    expect(refused.body.detail).to.deep.equal({ usedThisMonth: 3, limit: 3 });
    expect(await nextFolio(t, o, 33)).to.equal(4);
    expect(await dteCount(o)).to.equal(3);

    // a retry of an issued document answers it again, even over the limit, and counts once
    const replay = await emit(t, o, body(33, o.rut), { idem: keys[1] });
    expect(replay.status, replay.text).to.be.oneOf([200, 202]);
    expect(replay.body.folio).to.equal(2);
    expect(await usage(o)).to.equal(3);

    await limitTo(o, 4);
    const next = await emit(t, o, body(33, o.rut));
    expect(next.status, next.text).to.equal(202);
    expect(next.body.folio).to.equal(4);
    expect(await usage(o)).to.equal(4);
    const again = await emit(t, o, body(33, o.rut));
    expect(again.status).to.equal(402);
    expect(again.body.detail).to.deep.equal({ usedThisMonth: 4, limit: 4 });
    expect(await nextFolio(t, o, 33)).to.equal(5);
  });

  it('50 concurrent emissions against a limit of 10 issue exactly 10, with folios 1..10 and no gap', async () => {
    const o = await orgWithCafs(t, { tipos: [33], hasta: 60 });
    await limitTo(o, 10);
    const answers = await Promise.all(Array.from({ length: 50 }, () => emit(t, o, body(33, o.rut))));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 202)).to.have.length(10, JSON.stringify(statuses));
    expect(statuses.filter((s) => s === 402)).to.have.length(40);
    for (const a of answers.filter((x) => x.status === 402)) {
      expect(a.body.detail).to.deep.equal({ usedThisMonth: 10, limit: 10 });
    }
    const folios = answers
      .filter((a) => a.status === 202)
      .map((a) => a.body.folio as number)
      .sort((a, b) => a - b);
    expect(folios).to.deep.equal([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await nextFolio(t, o, 33)).to.equal(11);
    expect(await dteCount(o)).to.equal(10);
    expect(await usage(o)).to.equal(10);
  });

  it('a derived credit note counts like any document and is refused over the limit', async () => {
    const o = await orgWithCafs(t, { tipos: [33, 61] });
    await limitTo(o, 1);
    const factura = await emit(t, o, body(33, o.rut));
    expect(factura.status, factura.text).to.equal(202);
    const nc = await call(t.url, 'POST', `/dtes/${factura.body.id}/derive`, {
      key: o.key,
      json: { action: 'anular' },
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': o.certId },
    });
    expect(nc.status, nc.text).to.equal(402);
    expect(nc.body.detail).to.deep.equal({ usedThisMonth: 1, limit: 1 });
    expect(await nextFolio(t, o, 61)).to.equal(1);
  });

  it('a boleta batch that would cross the limit is refused whole, with the counts, and takes no folio', async () => {
    const o = await orgWithCafs(t, { tipos: [39] });
    await limitTo(o, 5);
    const single = await call(t.url, 'POST', '/boletas', {
      key: o.key,
      json: boletaBody(o.rut),
      headers: { 'Idempotency-Key': randomUUID(), 'X-Cert-Id': o.certId },
    });
    expect(single.status, single.text).to.equal(202);
    const batch = (n: number) =>
      call(t.url, 'POST', '/boletas/batch', {
        key: o.key,
        json: {
          batch_idempotency_key: randomUUID(),
          boletas: Array.from({ length: n }, () => boletaBody(o.rut)),
        },
        headers: { 'X-Cert-Id': o.certId },
      });
    const over = await batch(5);
    expect(over.status, over.text).to.equal(402);
    expect(over.body.detail).to.deep.equal({ usedThisMonth: 1, limit: 5, requested: 5 });
    expect(await nextFolio(t, o, 39)).to.equal(2);
    expect(await usage(o)).to.equal(1);
    const fits = await batch(4);
    expect(fits.status, fits.text).to.equal(202);
    expect(await nextFolio(t, o, 39)).to.equal(6);
    expect(await usage(o)).to.equal(5);
  });

  it('a BHE counts too: over the limit it answers 402 before the SII is asked, and its replay still answers', async () => {
    const o = await orgWithCafs(t, { tipos: [] });
    await enrol(t, o);
    await limitTo(o, 1);
    const bhe = (idem: string) =>
      call(t.url, 'POST', '/bhe', {
        key: o.key,
        json: {
          rut_receptor: '76086428-5',
          razon_social_receptor: 'Cliente SpA',
          fecha_emision: today(),
          descripcion: 'Asesoría contable',
          monto_bruto: 100000,
        },
        headers: { 'Idempotency-Key': idem, 'X-Cert-Id': o.certId },
      });
    const key = randomUUID();
    const first = await bhe(key);
    expect(first.status, first.text).to.equal(202);
    const second = await bhe(randomUUID());
    expect(second.status, second.text).to.equal(402);
    expect(second.body.detail).to.deep.equal({ usedThisMonth: 1, limit: 1 });
    const replay = await bhe(key);
    expect(replay.status, replay.text).to.be.oneOf([200, 202]);
    expect(replay.body.numero).to.equal(first.body.numero);
    expect(await usage(o)).to.equal(1);
    const bhes = await t.db.dataSource.query(
      'SELECT count(*)::int AS n FROM bhes WHERE organization_id = $1',
      [o.orgId],
    );
    expect(bhes[0].n).to.equal(1);
    // the refused one never reached the SII: the next BHE gets the SII's very next number
    await limitTo(o, 2);
    const next = await bhe(randomUUID());
    expect(next.status, next.text).to.equal(202);
    expect(next.body.numero).to.equal((first.body.numero as number) + 1);
  });

  it('an unlimited allowance still counts the month, and the default of certification is unlimited', async () => {
    const o = await orgWithCafs(t, { tipos: [33] });
    for (let i = 0; i < 3; i++) expect((await emit(t, o, body(33, o.rut))).status).to.equal(202);
    expect(await usage(o)).to.equal(3);
    const view = await call(t.url, 'GET', '/billing', { key: o.key });
    expect(view.status, view.text).to.equal(200);
    expect(view.body).to.deep.include({ plan: 'free' });
    expect((view.body.environments as Record<string, unknown>).cert).to.deep.equal({
      usedThisMonth: 3,
      limit: null,
    });
  });
});
