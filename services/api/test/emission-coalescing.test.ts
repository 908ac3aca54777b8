/**
 * Concurrent emissions of one company and type written together (dtes/folio-write.ts,
 * write-coalescer.ts), over HTTP with a real api and PostgreSQL. The emissions are made to
 * arrive while one of them is held at its folio (the company's CAF rows locked by the test,
 * holdCompanyFolios), so the others wait behind it and are written together when it is released:
 * a fact the test sets up, not a race. What a user sees must not change: every document its own
 * folio, contiguous, from the right CAF, in its XML, feed and pipeline messages; a used
 * Idempotency-Key answers its document; folios running out refuse the rest with nothing written.
 * writeManyWithFolios itself, from several connection pools: packages/emission/test/folio-write.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type Answer, type TestApi, startTestApi } from './support/test-api';
import {
  body,
  emit,
  holdCompanyFolios,
  nextFolio,
  orgWithCafs,
  uploadCaf as uploadCafOf,
  type DteOrg,
} from './dtes-fixtures';

describe('concurrent emissions of one company and type, written together', function () {
  this.timeout(120_000);
  let t: TestApi;

  before(async () => {
    t = await startTestApi();
  });
  after(() => t?.close());

  const root = () => t.url.replace(/\/api\/v1$/, '');
  const inflight = async (): Promise<number> => {
    const text = await (await fetch(`${root()}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith('dte_http_inflight_writes '));
    return line ? Number(line.split(' ')[1]) : 0;
  };

  /**
   * Sends the emissions while the company's folios are held, waits until the api has them all in
   * progress (and a moment for them to reach the writer), then releases the hold.
   */
  async function emitHeld(o: DteOrg, sends: (() => Promise<Answer>)[]): Promise<Answer[]> {
    const hold = await holdCompanyFolios(t, o);
    let answers: Promise<Answer[]>;
    try {
      answers = Promise.all(sends.map((s) => s()));
      while ((await inflight()) < sends.length) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      await hold.release();
    }
    return answers;
  }

  /** The organization's documents with what the pipeline and the feed got of each. */
  async function written(o: DteOrg) {
    return (await t.db.dataSource.query(
      `SELECT d.id, d.folio::int AS folio, d.caf_id, d.xmin::text AS tx,
              (d.document #>> '{Encabezado,IdDoc,Folio}')::int AS document_folio,
              (SELECT count(*)::int FROM dte_events e WHERE e.dte_id = d.id AND e.sii_status = 'queued') AS queued_feed,
              (SELECT json_agg(json_build_object('topic', x.topic, 'folio', (x.payload->>'folio')::int,
                                                 'caf_id', x.payload->>'caf_id'))
                 FROM outbox x WHERE x.message_key = d.id::text) AS messages
         FROM dtes d WHERE d.company_id = $1 ORDER BY d.folio`,
      [o.companyId],
    )) as {
      id: string;
      folio: number;
      caf_id: string;
      tx: string;
      document_folio: number;
      queued_feed: number;
      messages: { topic: string; folio: number; caf_id: string | null }[];
    }[];
  }

  /** A second CAF of type 33 (folios desde..hasta) for `o`, uploaded over HTTP. */
  const uploadCaf = (o: DteOrg, desde: number, hasta: number) =>
    uploadCafOf(t, o.key, o.rut, { desde, hasta });

  const cafIds = async (o: DteOrg): Promise<{ id: string; desde: number; hasta: number }[]> =>
    t.db.dataSource.query(
      'SELECT id, desde::int AS desde, hasta::int AS hasta FROM cafs WHERE company_id = $1 ORDER BY desde',
      [o.companyId],
    );

  it('gives each document its own folio, contiguous across CAFs, in its XML, feed and messages, with fewer transactions than documents', async () => {
    const o = await orgWithCafs(t, { tipos: [33], hasta: 10 });
    await uploadCaf(o, 11, 40);

    const answers = await emitHeld(
      o,
      Array.from({ length: 24 }, (_, i) => () => emit(t, o, body(33, o.rut, 1000 + i))),
    );
    for (const a of answers) expect(a.status, a.text).to.equal(202);
    expect(answers.map((a) => a.body.folio as number).sort((x, y) => x - y)).to.deep.equal(
      Array.from({ length: 24 }, (_, i) => i + 1),
    );
    const [a, b] = await cafIds(o);
    const rows = await written(o);
    expect(rows.map((r) => r.folio)).to.deep.equal(Array.from({ length: 24 }, (_, i) => i + 1));
    for (const r of rows) {
      expect(r.caf_id).to.equal(r.folio <= 10 ? a!.id : b!.id);
      expect(r.document_folio).to.equal(r.folio);
      expect(r.queued_feed).to.equal(1);
      expect(r.messages.map((m) => m.topic).sort()).to.deep.equal(['dte-status', 'dte.commands']);
      for (const m of r.messages) expect(m.folio).to.equal(r.folio);
      expect(r.messages.find((m) => m.topic === 'dte.commands')!.caf_id).to.equal(r.caf_id);
    }
    // each answer is its own document
    for (const ans of answers) {
      const row = rows.find((r) => r.id === ans.body.id);
      expect(row?.folio).to.equal(ans.body.folio);
    }
    // the ones that waited were written together (a statement per CAF, not per document)
    expect(new Set(rows.map((r) => r.tx)).size).to.be.at.most(4);
    const counters: { next_folio: string }[] = await t.db.dataSource.query(
      'SELECT next_folio FROM cafs WHERE company_id = $1 ORDER BY desde',
      [o.companyId],
    );
    expect(counters.map((c) => Number(c.next_folio))).to.deep.equal([11, 25]);
  });

  it('answers a used Idempotency-Key from its document and one key twice once, writing the others with their own folios', async () => {
    const o = await orgWithCafs(t, { tipos: [33], hasta: 50 });
    const used = randomUUID();
    const original = await emit(t, o, body(33, o.rut, 500), { idem: used });
    expect(original.status).to.equal(202);
    const twice = randomUUID();
    const answers = await emitHeld(o, [
      () => emit(t, o, body(33, o.rut, 600)),
      () => emit(t, o, body(33, o.rut, 500), { idem: used }), // a retry: same body
      () => emit(t, o, body(33, o.rut, 601)),
      () => emit(t, o, body(33, o.rut, 700), { idem: twice }),
      () => emit(t, o, body(33, o.rut, 701), { idem: twice }), // another body under that key
      () => emit(t, o, body(33, o.rut, 602)),
      () => emit(t, o, body(33, o.rut, 603)),
    ]);
    expect(answers[1]!.status).to.equal(202);
    expect(answers[1]!.body.id).to.equal(original.body.id);
    expect(answers[1]!.body.folio).to.equal(original.body.folio);
    const pair = [answers[3]!, answers[4]!];
    expect(pair.map((p) => p.status).sort()).to.deep.equal([202, 409]);
    expect(pair.find((p) => p.status === 409)!.body.code).to.equal('idempotency_conflict');
    const fresh = [answers[0]!, answers[2]!, pair.find((p) => p.status === 202)!, answers[5]!, answers[6]!];
    for (const f of fresh) expect(f.status, f.text).to.equal(202);
    expect(fresh.map((f) => f.body.folio as number).sort((x, y) => x - y)).to.deep.equal([2, 3, 4, 5, 6]);
    const rows = await written(o);
    expect(rows.map((r) => r.folio)).to.deep.equal([1, 2, 3, 4, 5, 6]);
    for (const r of rows) expect(r.messages).to.have.length(2);
    expect(await nextFolio(t, o, 33)).to.equal(7);
  });

  it('gives the last folios to the first documents and refuses the rest with caf_exhausted, writing nothing of them', async () => {
    const o = await orgWithCafs(t, { tipos: [33], hasta: 5 });
    const keys = Array.from({ length: 9 }, () => randomUUID());
    const answers = await emitHeld(
      o,
      keys.map((k, i) => () => emit(t, o, body(33, o.rut, 100 + i), { idem: k })),
    );
    const ok = answers.filter((a) => a.status === 202);
    const refused = answers.filter((a) => a.status !== 202);
    expect(ok.map((a) => a.body.folio as number).sort((x, y) => x - y)).to.deep.equal([1, 2, 3, 4, 5]);
    expect(refused).to.have.length(4);
    for (const r of refused) expect(r.body.code, r.text).to.equal('caf_exhausted');
    const rows = await written(o);
    expect(rows.map((r) => r.folio)).to.deep.equal([1, 2, 3, 4, 5]);
    const [{ n }]: { n: number }[] = await t.db.dataSource.query(
      `SELECT count(*)::int AS n FROM outbox WHERE payload->>'company_id' = $1 AND topic = 'dte.commands'`,
      [o.companyId],
    );
    expect(n).to.equal(5);
    expect(await nextFolio(t, o, 33)).to.equal(6);
  });
});
