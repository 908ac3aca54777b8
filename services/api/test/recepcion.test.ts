/**
 * The purchases side over HTTP against a real PostgreSQL and the SII simulator: received
 * intercambio files (hostile ones refused and stored nowhere), the inbox query of the spec, the
 * RCV sync (the very code services/rcv-sync runs, called here without Kafka), acuse and claims
 * registered at the simulator's register, the 8-day window and an SII outage during a sync.
 */
import { santiagoDate } from '@dte/engine';
import { syncPeriod, type RcvSource } from '@dte/reception';
import { expect } from 'chai';
import { attackFiles } from '../../../packages/reception/test/support/attacks';
import {
  intercambio,
  invoice,
  loneDte,
  signed,
  type Supplier,
} from '../../../packages/reception/test/support/supplier';
import { startReceptionWorld, type ReceptionWorld } from './support/reception-world';
import { call, simAdmin, type TestApi } from './support/test-api';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('purchases side: /recepcion, /rcv, /rcof (api + SII simulator)', function () {
  this.timeout(120_000);
  let w: ReceptionWorld;
  let t: TestApi;
  let key: string;
  let rut: string;
  let companyId: string;
  let source: RcvSource;
  const periodo = santiagoDate(new Date()).slice(0, 7);
  const today = santiagoDate(new Date());
  // a supplier whose CAF the (simulated) SII signed: reception verifies each CAF's FRMA
  let supplier: Supplier;

  const count = async () =>
    Number((await t.db.dataSource.query(`SELECT count(*)::int AS n FROM recepcion_documentos`))[0].n);
  const sync = () =>
    syncPeriod(t.db.dataSource, source, { companyId, env: 'cert', periodo, backoffMs: 1000 });
  const inbox = async (q = '') =>
    (await call<{ documentos: Doc[]; total: number }>(t.url, 'GET', `/recepcion${q}`, { key })).body;
  const byFolio = async (folio: number, emisor = '96543210-8') =>
    (await inbox('?pageSize=500')).documentos.find((d) => d.folio === folio && d.rut_emisor === emisor)!;
  const evento = (id: string, json: unknown) =>
    call<Doc>(t.url, 'POST', `/recepcion/${id}/eventos`, { key, json });
  const rcv = async () => (await call<Doc>(t.url, 'GET', `/rcv?periodo=${periodo}`, { key })).body;

  before(async () => {
    w = await startReceptionWorld();
    ({ t, key, rut, companyId, supplier, rcv: source } = w);
  });
  after(async () => w?.close());

  describe('received intercambio files', () => {
    it('stores a verified EnvioDTE addressed to us with its XML; the deadline waits for the SII reception date', async () => {
      const dte = signed(supplier, invoice(supplier, rut, 40_000));
      const res = await call<{ documentos: Doc[] }>(t.url, 'POST', '/recepcion/intercambio', {
        key,
        raw: intercambio(supplier, [dte], rut).toString('latin1'),
        headers: { 'Content-Type': 'application/xml' },
      });
      expect(res.status, res.text).to.equal(201);
      const [d] = res.body.documentos;
      expect(d).to.include({
        rut_emisor: '96543210-8',
        tipo_dte: 33,
        monto_neto: 40_000,
        monto_total: 47_600,
        tiene_xml: true,
      });
      expect(d!.origen).to.deep.equal(['intercambio']);
      expect(d!.plazo).to.deep.equal({
        fecha_recepcion_sii: null,
        vence: null,
        dias_restantes: null,
        en_plazo: null,
      });
      expect(d!.cesion).to.include({ estado: 'indeterminado', motivo: 'sin_consulta_sii' });
      const xml = await fetch(`${t.url}/recepcion/${d!.id}/xml`, {
        headers: { Authorization: `Bearer ${key}` },
      });
      expect(xml.status).to.equal(200);
      expect(Buffer.from(await xml.arrayBuffer()).toString('latin1')).to.equal(dte);
      // a lone DTE is received too
      const lone = await call(t.url, 'POST', '/recepcion/intercambio', {
        key,
        raw: loneDte(signed(supplier, invoice(supplier, rut))).toString('latin1'),
        headers: { 'Content-Type': 'application/xml' },
      });
      expect(lone.status, lone.text).to.equal(201);
    });

    it('refuses hostile and forged files with a reason and stores nothing', async () => {
      const before = await count();
      const files: Record<string, { xml: Buffer; reason: string }> = { ...attackFiles(rut) };
      const good = signed(supplier, invoice(supplier, rut, 30_000));
      files['tampered DTE'] = {
        xml: intercambio(
          supplier,
          [good.replace('<MntTotal>35700</MntTotal>', '<MntTotal>357</MntTotal>')],
          rut,
        ),
        reason: 'firma_dte_invalida',
      };
      // (a file with a good DTE beside a bad one is stored and answered per document:
      // recepcion-exchange.test.ts; a file whose every DTE is bad is refused whole)
      files['DTE for another company'] = {
        xml: intercambio(supplier, [signed(supplier, invoice(supplier, '77777777-7'))], rut),
        reason: 'dte_para_otra_empresa',
      };
      files['envelope for another company'] = {
        xml: intercambio(supplier, [good], '77777777-7'),
        reason: 'sobre_para_otra_empresa',
      };
      files.oversize = {
        xml: Buffer.concat([Buffer.from('<EnvioDTE>'), Buffer.alloc(10 * 1024 * 1024 + 10, 0x41)]),
        reason: 'tamano_excedido',
      };
      for (const [name, f] of Object.entries(files)) {
        const res = await fetch(`${t.url}/recepcion/intercambio`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/xml' },
          body: f.xml,
        });
        const body = (await res.json()) as Doc;
        expect(res.status, name).to.equal(400);
        expect(body.error?.code ?? body.code, name).to.equal('validation_failed');
        expect(JSON.stringify(body), name).to.contain(f.reason);
      }
      expect(await count()).to.equal(before);
    });
  });

  describe('the inbox query', () => {
    it('admits only cedida=true, integer page and pageSize 1-500 (recepcion.query_invalid)', async () => {
      for (const q of [
        'cedida=false',
        'cedida=1',
        'pageSize=0',
        'pageSize=501',
        'pageSize=abc',
        'page=0',
        'page=1.5',
        'page=1&page=2',
      ]) {
        const res = await call<Doc>(t.url, 'GET', `/recepcion?${q}`, { key });
        expect(res.status, q).to.equal(400);
        expect(res.text, q).to.contain('recepcion.query_invalid');
      }
      const all = await inbox('?pageSize=500');
      const page = await inbox('?page=2&pageSize=1');
      expect(page.total).to.equal(all.total);
      expect(page.documentos).to.have.length(1);
      expect(page.documentos[0]!.id).to.equal(all.documentos[1]!.id);
    });

    it('needs recepcion:read', async () => {
      const other = await t.seed({ scopes: ['dte:read'] });
      expect((await call(t.url, 'GET', '/recepcion', { key: other.api_key })).status).to.equal(403);
    });
  });

  describe('RCV sync, acuse and claims', () => {
    const oldReception = new Date(Date.now() - 10 * 86_400_000).toISOString();
    before(async () => {
      await w.purchase({ folio: 901, mntNeto: 1000 });
      await w.purchase({ folio: 902, mntNeto: 2000 });
      await w.purchase({ folio: 903, mntNeto: 3000, fechaRecepcion: oldReception });
      await simAdmin(t, 'POST', `/admin/cert/purchases/96543210-8/33/902/cesion`, {
        rutCesionario: '99888777-6',
        razonSocialCesionario: 'FACTOR SPA',
        fechaCesion: today,
      });
    });

    it('GET /rcv before any sync is rcv.not_found; a bad period is rcv.period.invalid', async () => {
      const r = await call(t.url, 'GET', `/rcv?periodo=${periodo}`, { key });
      expect(r.status).to.equal(404);
      expect(r.text).to.contain('rcv.not_found');
      for (const p of ['2026-13', 'x', '2999-01']) {
        const bad = await call(t.url, 'GET', `/rcv?periodo=${p}`, { key });
        expect(bad.status, p).to.equal(422);
        expect(bad.text).to.contain('rcv.period.invalid');
      }
    });

    it('POST /rcv enqueues the sync command through the outbox, keyed by company, env and period', async () => {
      const res = await call<Doc>(t.url, 'POST', '/rcv', { key, json: { periodo } });
      expect(res.status, res.text).to.equal(202);
      expect(res.body).to.include({ periodo, estado: 'queued' });
      const [row] = await t.db.dataSource.query(
        `SELECT topic, schema, message_key, payload FROM outbox WHERE event_id = $1`,
        [res.body.solicitud_id],
      );
      expect(row).to.include({
        topic: 'rcv.sync',
        schema: 'rcv-sync',
        message_key: `${companyId}:cert:${periodo}`,
      });
      expect((await call(t.url, 'POST', '/rcv', { key, json: { periodo: '2999-01' } })).status).to.equal(422);
    });

    it('a sync brings the purchases into the register and the inbox with deadline and cesión', async () => {
      expect(await sync()).to.include({ outcome: 'synced' });
      const r = await rcv();
      expect(r.compras.map((d: Doc) => [d.folio, d.sii_estado])).to.deep.equal([
        [901, 'pending'],
        [902, 'pending'],
        [903, 'registered'],
      ]);
      const d1 = await byFolio(901);
      expect(d1.origen).to.deep.equal(['rcv']);
      expect(d1.plazo.en_plazo).to.equal(true);
      expect(d1.plazo.dias_restantes).to.be.within(7, 8);
      expect(d1.cesion).to.include({ estado: 'no_cedida' });
      const d2 = await byFolio(902);
      expect(d2.cesion).to.deep.include({
        estado: 'cedida',
        cesionario: { rut: '99888777-6', razon_social: 'FACTOR SPA', fecha_cesion: today },
      });
      const d3 = await byFolio(903);
      // the register writes reception times to the second (DD/MM/YYYY HH:MM:SS)
      expect(d3.plazo).to.include({
        en_plazo: false,
        fecha_recepcion_sii: new Date(Math.floor(Date.parse(oldReception) / 1000) * 1000).toISOString(),
      });
      const ced = await inbox('?cedida=true');
      expect(ced.total).to.equal(1);
      expect(ced.documentos[0]!.folio).to.equal(902);
      // idempotent and incremental: the same SII answer writes no register row again
      expect(await sync()).to.include({ outcome: 'synced', documents: 3, changed: 0 });
      expect((await rcv()).compras).to.have.length(3);
    });

    it('an ACD needs confirmar true, reaches the SII register, and shows in the inbox and the RCV', async () => {
      const d1 = await byFolio(901);
      const noConfirm = await evento(d1.id, { accion: 'ACD' });
      expect(noConfirm.status).to.equal(400);
      expect(noConfirm.text).to.contain('recepcion.evento_invalid_input');
      const badAction = await evento(d1.id, { accion: 'XYZ', confirmar: true });
      expect(badAction.status).to.equal(400);
      expect(badAction.text).to.contain('recepcion.evento_invalid_input');
      expect(
        (await evento('00000000-0000-4000-8000-000000000000', { accion: 'ACD', confirmar: true })).status,
      ).to.equal(404);

      const ok = await evento(d1.id, { accion: 'ACD', confirmar: true });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body).to.include({ acuse: 'ACD', reclamo: null, sii_estado: 'accepted' });
      // only the acknowledged document changed at the SII (PENDIENTE → REGISTRO)
      expect(await sync()).to.include({ changed: 1 });
      const row = (await rcv()).compras.find((d: Doc) => d.folio === 901);
      expect(row).to.deep.include({ sii_estado: 'accepted', eventos: ['ACD'] });
      // a claim after an acceptance: the register says 11, nothing changes
      const claim = await evento(d1.id, { accion: 'RCD', confirmar: true });
      expect(claim.status).to.equal(422);
      expect(claim.body.detail ?? claim.body.error?.detail).to.deep.include({ codResp: 11 });
    });

    it('claiming a transferred document needs forzar; then the claim shows in the inbox and the RCV', async () => {
      const d2 = await byFolio(902);
      const warn = await evento(d2.id, { accion: 'RCD', confirmar: true });
      expect(warn.status).to.equal(409);
      expect(warn.text).to.contain('recepcion.rar_cedible_warning');
      expect(warn.text).to.contain('requiresOverride');
      const ok = await evento(d2.id, { accion: 'RCD', confirmar: true, forzar: true });
      expect(ok.status, ok.text).to.equal(200);
      expect(ok.body).to.include({ reclamo: 'RCD', sii_estado: 'claimed' });
      await sync();
      expect((await rcv()).compras.find((d: Doc) => d.folio === 902)).to.deep.include({
        sii_estado: 'claimed',
        eventos: ['RCD'],
      });
    });

    it('a claim after the 8-day window answers its code (codResp 8) and changes nothing', async () => {
      const d3 = await byFolio(903);
      const res = await evento(d3.id, { accion: 'RFT', confirmar: true });
      expect(res.status).to.equal(422);
      expect(res.text).to.contain('recepcion.rar_evento_rechazado');
      expect(res.text).to.contain('"codResp":8');
      const after = await byFolio(903);
      expect(after).to.deep.equal(d3);
      // nor at the SII: its register shows no event on the document
      await sync();
      expect((await rcv()).compras.find((d: Doc) => d.folio === 903)).to.deep.include({
        sii_estado: 'registered',
        eventos: [],
      });
    });

    it('an SII outage during a sync keeps the previous snapshot and schedules a retry with backoff', async () => {
      const before = await rcv();
      await simAdmin(t, 'POST', '/admin/triggers', {
        kind: 'http-error',
        operation: 'rcv',
        status: 503,
        times: 2,
      });
      const r = await sync();
      expect(r).to.include({ outcome: 'failed', attempts: 1 });
      const during = await rcv();
      expect(during.compras).to.deep.equal(before.compras);
      expect(during.ventas).to.deep.equal(before.ventas);
      expect(during.sincronizacion).to.include({ estado: 'retrying', intentos: 1 });
      expect(new Date(during.sincronizacion.proximo_intento).getTime()).to.be.greaterThan(Date.now());
      expect(await sync()).to.include({ outcome: 'failed', attempts: 2 });
      expect(await sync()).to.include({ outcome: 'synced' });
      expect((await rcv()).sincronizacion).to.include({ estado: 'synced', intentos: 0 });
    });

    it('one writer per (company, env, period): a second sync while one runs answers busy and writes nothing', async () => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let reads = 0;
      const slow: RcvSource = {
        read: async (q) => {
          reads += 1;
          await gate;
          return source.read(q);
        },
      };
      const first = syncPeriod(t.db.dataSource, slow, { companyId, env: 'cert', periodo });
      while (reads === 0) await new Promise((r) => setTimeout(r, 10));
      const second = await syncPeriod(t.db.dataSource, slow, { companyId, env: 'cert', periodo });
      expect(second).to.deep.equal({ outcome: 'busy' });
      expect(reads).to.equal(1);
      release();
      expect(await first).to.include({ outcome: 'synced' });
    });

    it('GET /rcof lists consumption reports read-only (none sent by this service)', async () => {
      const res = await call<Doc>(t.url, 'GET', '/rcof', { key });
      expect(res.status).to.equal(200);
      expect(res.body.data).to.deep.equal([]);
    });
  });
});
