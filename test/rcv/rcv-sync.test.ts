/**
 * The purchases side over the real stack: the api, signer, sii-uploader, sii-poller and rcv-sync
 * as processes, real Kafka (rcv.sync commands through the api outbox; dte-status consumed by
 * rcv-sync's own group), PostgreSQL, Redis and the SII simulator as a process.
 *
 * A seller and a buyer are both companies of the service. The seller issues invoices to the
 * buyer; purchases from a third issuer are seeded at the simulator for the buyer (one of them
 * transferred to a factoring company). Then:
 *   - the seller's own documents reach the sales side of the register from dte-status, and after
 *     POST /rcv show with their SII state and no differences;
 *   - the buyer's POST /rcv brings the seller's invoices and the seeded purchases into the RCV and
 *     the inbox, with the legal deadline and the cesión block;
 *   - an ACD and a claim by the buyer reach the simulator's register and show in the buyer's inbox
 *     and RCV, and (after the seller's sync) in the seller's RCV and its documents' receptor_estado.
 */
import { acuseReciboDeadline, santiagoDate } from '@dte/engine';
import { expect } from 'chai';
import {
  emissionBody,
  startPipelineProcesses,
  type RunningPipeline,
  type SeededCompany,
} from '../support/pipeline-harness';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('RCV and purchases inbox over the real pipeline (Kafka, rcv-sync, SII simulator)', function () {
  this.timeout(240_000);
  let p: RunningPipeline;
  let seller: SeededCompany;
  let buyer: SeededCompany;
  const periodo = santiagoDate(new Date()).slice(0, 7);
  const today = santiagoDate(new Date());
  const THIRD = '96543210-8';

  const api = async (
    co: SeededCompany,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(`${p.apiUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${co.key}`,
        ...(body ? { 'Content-Type': 'application/json' } : {}),
        ...headers,
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Doc };
  };
  async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await f();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what} (logs in ${p.logDir})`);
      await sleep(300);
    }
  }
  /** POST /rcv, then the snapshot once a sync newer than the one read before the request is there */
  async function syncAndRead(co: SeededCompany): Promise<Doc> {
    const prev = await api(co, 'GET', `/rcv?periodo=${periodo}`);
    const prevAt = prev.status === 200 ? (prev.body.sincronizacion.sincronizado_al as string) : '';
    const r = await api(co, 'POST', '/rcv', { periodo });
    expect(r.status, JSON.stringify(r.body)).to.equal(202);
    return until(`the RCV of ${co.rut}`, async () => {
      const g = await api(co, 'GET', `/rcv?periodo=${periodo}`);
      return g.status === 200 && g.body.sincronizacion.sincronizado_al > prevAt ? g.body : undefined;
    });
  }

  before(async () => {
    p = await startPipelineProcesses({
      label: 'rcv',
      withRcvSync: true,
      env: { RCV_TICK_MS: '500', RCV_BACKOFF_MS: '1000' },
    });
    [seller, buyer] = [
      await p.seedCompany({ tipos: [33], folios: 50 }),
      await p.seedCompany({ tipos: [33], folios: 10 }),
    ];
  });
  after(async () => p?.close());

  const issued: string[] = [];

  it('documents we issue reach the sales side from dte-status, then show in the RCV with their SII state', async () => {
    const receptors = [buyer.rut, buyer.rut, '77777777-7'];
    for (const [i, rut] of receptors.entries()) {
      const body = emissionBody(33, seller.rut, 10_000 * (i + 1));
      (body.receptor as Doc).rut = rut;
      const r = await api(seller, 'POST', '/dtes', body, {
        'Idempotency-Key': `rcv-${i}`,
        'X-Cert-Id': seller.certId,
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(202);
      issued.push(r.body.id);
    }
    await until('EPR for every document', async () => {
      const all = await Promise.all(issued.map((id) => api(seller, 'GET', `/dtes/${id}`)));
      return all.every((d) => d.body.estado.terminal && d.body.sii_status === 'EPR') || undefined;
    });
    // the compacted dte-status topic, consumed by rcv-sync's own group, already fills the sales side
    await until('own statuses on the sales side', async () => {
      const rows = await p.db.dataSource.query(
        `SELECT own_sii_status FROM rcv_documents WHERE dte_id = ANY($1::uuid[]) AND own_sii_status = 'EPR'`,
        [issued],
      );
      return rows.length === 3 || undefined;
    });
    const r = await syncAndRead(seller);
    const ventas = r.ventas.filter((d: Doc) => issued.includes(d.dte_id));
    expect(ventas).to.have.length(3);
    for (const v of ventas)
      expect(v).to.include({ sii_estado: 'registered', sii_status: 'EPR', rut_emisor: seller.rut });
    expect(r.diferencias).to.deep.equal([]);
  });

  let inbox: Doc[] = [];
  it('purchases (the seller invoices and seeded ones) reach the buyer inbox with deadline and cesión', async () => {
    for (const folio of [501, 502])
      await p.simAdmin('POST', '/admin/cert/purchases', {
        rutReceptor: buyer.rut,
        rutEmisor: THIRD,
        tipoDte: 33,
        folio,
        fchEmis: today,
        mntNeto: 5000,
        mntExe: 0,
        iva: 950,
        mntTotal: 5950,
      });
    await p.simAdmin('POST', `/admin/cert/purchases/${THIRD}/33/502/cesion`, {
      rutCesionario: '99888777-6',
      razonSocialCesionario: 'FACTOR SPA',
      fechaCesion: today,
    });
    // the seller also sends its first invoice by intercambio (the signed DTE, alone): verified,
    // stored with its XML, and the SII register gives its reception date at once
    const xml = await fetch(`${p.apiUrl}/dtes/${issued[0]}/xml`, {
      headers: { Authorization: `Bearer ${seller.key}` },
    });
    expect(xml.status).to.equal(200);
    const received = await fetch(`${p.apiUrl}/recepcion/intercambio`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${buyer.key}`, 'Content-Type': 'application/xml' },
      body: Buffer.from(await xml.arrayBuffer()),
    });
    const rb = (await received.json()) as Doc;
    expect(received.status, JSON.stringify(rb)).to.equal(201);
    expect(rb.documentos[0]).to.include({ rut_emisor: seller.rut, tiene_xml: true });
    expect(rb.documentos[0].origen).to.deep.equal(['intercambio']);
    expect(rb.documentos[0].plazo.en_plazo).to.equal(true);
    expect(rb.documentos[0].plazo.fecha_recepcion_sii).to.be.a('string');

    const r = await syncAndRead(buyer);
    expect(r.compras.map((d: Doc) => [d.rut_emisor, d.sii_estado])).to.have.deep.members([
      [seller.rut, 'pending'],
      [seller.rut, 'pending'],
      [THIRD, 'pending'],
      [THIRD, 'pending'],
    ]);
    const list = await api(buyer, 'GET', '/recepcion?page=1&pageSize=500');
    expect(list.status).to.equal(200);
    expect(list.body.total).to.equal(4);
    inbox = list.body.documentos;
    for (const d of inbox) {
      expect(d.plazo.en_plazo, JSON.stringify(d)).to.equal(true);
      // eight calendar days after the reception day, to midnight in Chile (not +192 h)
      expect(d.plazo.vence).to.equal(
        acuseReciboDeadline(new Date(d.plazo.fecha_recepcion_sii)).toISOString(),
      );
      expect(new Date(d.plazo.vence).getTime() - new Date(d.plazo.fecha_recepcion_sii).getTime()).to.be.above(
        8 * 86_400_000,
      );
    }
    expect(inbox.find((d) => d.id === rb.documentos[0].id)!.origen).to.deep.equal(['intercambio', 'rcv']);
    const ceded = inbox.find((d) => d.folio === 502 && d.rut_emisor === THIRD)!;
    expect(ceded.cesion).to.deep.include({
      estado: 'cedida',
      cesionario: { rut: '99888777-6', razon_social: 'FACTOR SPA', fecha_cesion: today },
    });
    expect(inbox.find((d) => d.folio === 501)!.cesion.estado).to.equal('no_cedida');
    const onlyCeded = await api(buyer, 'GET', '/recepcion?cedida=true');
    expect(onlyCeded.body.total).to.equal(1);
  });

  it('an ACD and a claim reach the SII register and show in the inbox, both RCVs and receptor_estado', async () => {
    const [first, second] = await Promise.all(
      issued.slice(0, 2).map(async (id) => (await api(seller, 'GET', `/dtes/${id}`)).body.folio as number),
    );
    const doc = (folio: number) => inbox.find((d) => d.rut_emisor === seller.rut && d.folio === folio)!;
    const acd = await api(buyer, 'POST', `/recepcion/${doc(first!).id}/eventos`, {
      accion: 'ACD',
      confirmar: true,
    });
    expect(acd.status, JSON.stringify(acd.body)).to.equal(200);
    expect(acd.body).to.include({ acuse: 'ACD', sii_estado: 'accepted' });
    const rcd = await api(buyer, 'POST', `/recepcion/${doc(second!).id}/eventos`, {
      accion: 'RCD',
      confirmar: true,
    });
    expect(rcd.status, JSON.stringify(rcd.body)).to.equal(200);
    expect(rcd.body).to.include({ reclamo: 'RCD', sii_estado: 'claimed' });

    // the simulator's register holds both events
    const simDocs = await p.simAdmin<Doc[]>('GET', '/admin/cert/documents');
    const events = (folio: number) =>
      simDocs
        .find((d) => d.rutEmisor === seller.rut && d.folio === folio)
        ?.events?.map((e: Doc) => e.codEvento);
    expect(events(first!)).to.deep.equal(['ACD']);
    expect(events(second!)).to.deep.equal(['RCD']);

    const b = await syncAndRead(buyer);
    const compra = (folio: number) =>
      b.compras.find((d: Doc) => d.rut_emisor === seller.rut && d.folio === folio);
    expect(compra(first!)).to.deep.include({ sii_estado: 'accepted', eventos: ['ACD'] });
    expect(compra(second!)).to.deep.include({ sii_estado: 'claimed', eventos: ['RCD'] });

    const s = await syncAndRead(seller);
    const venta = (id: string) => s.ventas.find((d: Doc) => d.dte_id === id);
    expect(venta(issued[0]!)).to.deep.include({ eventos: ['ACD'] });
    expect(venta(issued[1]!)).to.deep.include({ eventos: ['RCD'] });
    const estados = await Promise.all(
      issued.map(async (id) => (await api(seller, 'GET', `/dtes/${id}`)).body.receptor_estado),
    );
    expect(estados).to.deep.equal(['aceptado', 'reclamado', 'en_plazo']);
  });

  it('an SII outage during a sync keeps the snapshot; rcv-sync retries with backoff on its own', async () => {
    const before = (await api(buyer, 'GET', `/rcv?periodo=${periodo}`)).body;
    await p.simAdmin('POST', '/admin/triggers', {
      kind: 'http-error',
      operation: 'rcv',
      status: 503,
      times: 2,
    });
    const r = await api(buyer, 'POST', '/rcv', { periodo });
    expect(r.status).to.equal(202);
    const during = await until('the failed attempt', async () => {
      const g = (await api(buyer, 'GET', `/rcv?periodo=${periodo}`)).body;
      return g.sincronizacion.estado === 'retrying' ? g : undefined;
    });
    expect(during.compras).to.deep.equal(before.compras);
    expect(during.sincronizacion.sincronizado_al).to.equal(before.sincronizacion.sincronizado_al);
    // no new command: the scheduler retries after the backoff until the SII answers again
    const after = await until('the retried sync', async () => {
      const g = (await api(buyer, 'GET', `/rcv?periodo=${periodo}`)).body;
      return g.sincronizacion.estado === 'synced' &&
        g.sincronizacion.sincronizado_al > before.sincronizacion.sincronizado_al
        ? g
        : undefined;
    });
    expect(after.compras).to.have.length(4);
    expect(after.sincronizacion.intentos).to.equal(0);
  });
});
