/**
 * The inbox and RCV request rules the REST routes and the MCP tools share (src/inbox-query.ts,
 * src/register-eventos.ts, src/rcv-requests.ts): the inbox query the spec admits, an irreversible
 * register event only with confirmar true, and an RCV sync asked through the outbox in the same
 * transaction as its period row (a failed period re-armed), against a migrated schema.
 */
import { expect } from 'chai';
import type { Principal } from '@dte/tenancy';
import { migratedDatabase, type MigratedDatabase } from '../../../test/support/env';
import { apiKeyPrincipal, insertTenant } from '../../../test/support/tenant-fixture';
import {
  checkEventoBody,
  companyIdOf,
  parseRecepcionQuery,
  requestRcvSync,
  type ReceptionDeps,
} from '../src';
import { refusal } from '../../../test/support/refusal';

describe('reception: inbox query, register events, RCV requests', function () {
  this.timeout(60_000);
  let db: MigratedDatabase;
  /** requestRcvSync and companyIdOf read the database only */
  let deps: ReceptionDeps;
  before(async () => {
    db = await migratedDatabase('reception_requests');
    deps = { config: { siiTimeoutMs: 5000 }, dataSource: db.dataSource } as Pick<
      ReceptionDeps,
      'config' | 'dataSource'
    > as ReceptionDeps;
  });
  after(() => db?.cleanup());

  it('admits the inbox query of the spec only: cedida=true, page >= 1, pageSize 1-500, each once', async () => {
    expect(parseRecepcionQuery({})).to.deep.equal({ cedida: false, page: 1, pageSize: 50 });
    expect(parseRecepcionQuery({ cedida: 'true', page: '3', pageSize: '500' })).to.deep.equal({
      cedida: true,
      page: 3,
      pageSize: 500,
    });
    for (const q of [
      { cedida: 'false' },
      { page: '0' },
      { pageSize: '501' },
      { pageSize: '-1' },
      { page: '1.5' },
      { page: ['1', '2'] },
    ]) {
      expect((await refusal(() => parseRecepcionQuery(q))).code, JSON.stringify(q)).to.equal(
        'recepcion.query_invalid',
      );
    }
  });

  it('registers an event at the SII only with a known action and confirmar true', async () => {
    expect(checkEventoBody({ accion: 'ACD', confirmar: true })).to.deep.equal({
      accion: 'ACD',
      confirmar: true,
      forzar: false,
    });
    expect(
      checkEventoBody({ accion: 'ERM', confirmar: true, forzar: true, recinto: 'Bodega Maipú' }),
    ).to.deep.equal({
      accion: 'ERM',
      confirmar: true,
      forzar: true,
      recinto: 'Bodega Maipú',
    });
    const unknown = await refusal(() => checkEventoBody({ accion: 'XYZ', confirmar: true }));
    expect(unknown.code).to.equal('recepcion.evento_invalid_input');
    expect(unknown.detail).to.deep.equal({ accion: 'XYZ' });
    for (const confirmar of [undefined, false, 'true']) {
      const e = await refusal(() => checkEventoBody({ accion: 'RCD', confirmar }));
      expect(e.detail).to.deep.equal({ campo: 'confirmar' });
    }
    for (const recinto of ['', '   ', 'x'.repeat(81), 7]) {
      const e = await refusal(() => checkEventoBody({ accion: 'ERM', confirmar: true, recinto }));
      expect(e.detail).to.deep.equal({ campo: 'recinto' });
    }
  });

  it('asks an RCV sync through the outbox with its period row, re-arming a failed period, for one company only', async () => {
    const t = await insertTenant(db.dataSource);
    const p = apiKeyPrincipal(t, ['rcv:read']);
    const at = new Date('2026-11-20T12:00:00Z');
    const answer = await requestRcvSync(deps, p, '2026-10', at);
    expect(answer).to.include({ periodo: '2026-10', estado: 'queued' });
    const [outbox] = await db.dataSource.query(
      `SELECT topic, message_key, payload FROM outbox WHERE event_id = $1`,
      [answer.solicitud_id],
    );
    expect(outbox.topic).to.equal('rcv.sync');
    expect(outbox.message_key).to.equal(`${t.companyId}:cert:2026-10`);
    expect(outbox.payload).to.deep.include({ company_id: t.companyId, sii_env: 'cert', periodo: '2026-10' });
    const period = async () =>
      (
        await db.dataSource.query(
          'SELECT status, attempts FROM rcv_periods WHERE company_id = $1 AND sii_env = $2 AND periodo = $3',
          [t.companyId, 'cert', '2026-10'],
        )
      )[0];
    expect(await period()).to.deep.equal({ status: 'pending', attempts: 0 });
    await db.dataSource.query(
      `UPDATE rcv_periods SET status = 'failed', attempts = 5 WHERE company_id = $1`,
      [t.companyId],
    );
    await requestRcvSync(deps, p, '2026-10', at);
    expect(await period()).to.deep.equal({ status: 'retrying', attempts: 0 });

    // a session of an organization with two companies names none: nothing is asked
    await db.dataSource.query(
      `INSERT INTO companies (organization_id, rut, razon_social) VALUES ($1, '76086428-5', 'OTRA')`,
      [t.organizationId],
    );
    const session: Principal = { ...p, kind: 'session', companyId: null, scopes: null, role: 'owner' };
    const err = await refusal(requestRcvSync(deps, session, '2026-09', at));
    expect(err.code).to.equal('empresa.not_found');
    expect(await companyIdOf(deps, p)).to.equal(t.companyId);
  });
});
