import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { classify } from '@dte/status';
import { call, startTestApi, type TestApi } from './support/test-api';
import { body, emit, expectSchema, orgWithCafs, today, type DteOrg } from './dtes-fixtures';

interface Row {
  id: string;
  folio: number;
  monto_total: number;
  fecha_emision: string;
  sii_status: string;
  created_at: string;
  tipo_dte: number;
  rut_receptor: string;
  links: { self: string };
}

describe('GET /dtes, /dtes/:id, /events, /xml over HTTP', function () {
  this.timeout(240_000);
  let t: TestApi;
  let o: DteOrg;
  const ids: string[] = [];
  const get = (path: string, key = o.key) => call(t.url, 'GET', path, { key });

  before(async () => {
    t = await startTestApi();
    o = await orgWithCafs(t, { tipos: [33, 34], hasta: 200 });
    // 12 facturas with many equal amounts (ties), one 34, one with another receptor
    const amounts = [1000, 1000, 1000, 2000, 2000, 3000, 1000, 5000, 2000, 1000, 4000, 1000];
    for (const a of amounts) {
      const res = await emit(t, o, body(33, o.rut, a));
      if (res.status !== 202) throw new Error(res.text);
      ids.push(res.body.id as string);
    }
    const r34 = await emit(t, o, body(34, o.rut, 1000));
    ids.push(r34.body.id as string);
    const other = body(33, o.rut, 1000);
    other.receptor = { ...(other.receptor as object), rut: '11111111-1' };
    ids.push((await emit(t, o, other)).body.id as string);
    // ties in created_at too: four documents share one instant (set directly, as a clock would)
    await t.db.dataSource.query(
      `UPDATE dtes SET created_at = '2026-01-01T00:00:00.123456Z' WHERE id = ANY($1)`,
      [ids.slice(0, 4)],
    );
  });
  after(async () => t?.close());

  const all = async (query: string): Promise<{ rows: Row[]; pages: number }> => {
    const rows: Row[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`/dtes?${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, res.text).to.equal(200);
      rows.push(...(res.body.data as Row[]));
      cursor = res.body.next_cursor as string | null;
      pages += 1;
      if (pages > 50) throw new Error('pagination does not end');
    } while (cursor);
    return { rows, pages };
  };

  const expectedOrder = (rows: Row[], sort: keyof Row, dir: 'asc' | 'desc') => {
    const sorted = [...rows].sort((a, b) => {
      const va = a[sort] as string | number;
      const vb = b[sort] as string | number;
      const c = va < vb ? -1 : va > vb ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
      return dir === 'asc' ? c : -c;
    });
    return sorted.map((r) => r.id);
  };

  it('pages every sort and dir with limit 3: each document once, in (sort key, id) order across ties', async () => {
    for (const sort of ['folio', 'monto_total', 'fecha_emision', 'sii_status', 'created_at'] as const) {
      for (const dir of ['asc', 'desc'] as const) {
        const { rows, pages } = await all(`limit=3&sort=${sort}&dir=${dir}`);
        expect(rows.map((r) => r.id).sort(), `${sort} ${dir}`).to.deep.equal([...ids].sort());
        expect(pages).to.equal(Math.ceil(ids.length / 3));
        expect(
          rows.map((r) => r.id),
          `${sort} ${dir}`,
        ).to.deep.equal(expectedOrder(rows, sort, dir));
      }
    }
  });

  it('defaults to created_at desc, limit 20; unknown sort/dir fall back to the defaults', async () => {
    const def = await get('/dtes');
    expectSchema('dte-list.schema.json', def.body);
    const data = def.body.data as Row[];
    expect(data).to.have.length(ids.length);
    expect(def.body.next_cursor).to.equal(null);
    expect(data.map((r) => r.id)).to.deep.equal(expectedOrder(data, 'created_at', 'desc'));
    const odd = await get('/dtes?sort=bogus&dir=sideways');
    expect((odd.body.data as Row[]).map((r) => r.id)).to.deep.equal(data.map((r) => r.id));
    // a cursor made under the fallback is the default's cursor
    const p1 = await get('/dtes?sort=bogus&limit=2');
    const p2 = await get(`/dtes?limit=2&cursor=${p1.body.next_cursor}`);
    expect(p2.status).to.equal(200);
    expect((p2.body.data as Row[])[0].id).to.equal(data[2].id);
    expect(data[0]).to.have.all.keys(
      'id',
      'folio',
      'tipo_dte',
      'rut_emisor',
      'rut_receptor',
      'razon_social_receptor',
      'monto_total',
      'sii_env',
      'sii_status',
      'sii_glosa',
      'track_id',
      'sii_last_polled',
      'receptor_estado',
      'fecha_emision',
      'created_at',
      'links',
    );
    expect(data[0].links).to.deep.equal({ self: `/api/v1/dtes/${data[0].id}` });
  });

  it('clamps limit to 1-100', async () => {
    const zero = await get('/dtes?limit=0');
    expect(zero.body.data as Row[]).to.have.length(1);
    expect(zero.body.next_cursor).to.be.a('string');
    const neg = await get('/dtes?limit=-5');
    expect(neg.body.data as Row[]).to.have.length(1);
    const big = await get('/dtes?limit=100000');
    expect(big.body.data as Row[]).to.have.length(ids.length);
  });

  it('binds the cursor to its sort and dir, and rejects malformed ones (dte.list.cursor_invalido)', async () => {
    const p1 = await get('/dtes?limit=2&sort=folio&dir=asc');
    const cursor = p1.body.next_cursor as string;
    for (const q of [`sort=folio&dir=desc`, `sort=monto_total&dir=asc`, ``]) {
      const res = await get(`/dtes?limit=2&${q}&cursor=${cursor}`);
      expect(res.status, q).to.equal(422);
      expect(res.body).to.include({ code: 'dte.list.cursor_invalido', next_action: 'fix_query' });
    }
    const forged = Buffer.from(
      JSON.stringify({ s: 'folio', d: 'asc', v: "1'; DROP TABLE dtes; --", i: randomUUID() }),
    ).toString('base64url');
    for (const bad of ['not-a-cursor!', 'e30', forged, 'x'.repeat(40)]) {
      const res = await get(`/dtes?sort=folio&dir=asc&cursor=${encodeURIComponent(bad)}`);
      expect(res.status, bad).to.equal(422);
      expect(res.body.code).to.equal('dte.list.cursor_invalido');
    }
  });

  it('filters by tipo_dte, folio, rut_receptor, fechas, receptor_estado, sii_status and polled_since', async () => {
    const only = async (q: string) => ((await get(`/dtes?${q}`)).body.data as Row[]).map((r) => r.id).sort();
    expect(await only('tipo_dte=34')).to.deep.equal([ids[12]]);
    const f = ((await get(`/dtes/${ids[5]}`)).body as { folio: number }).folio;
    expect(await only(`folio=${f}&tipo_dte=33`)).to.deep.equal([ids[5]]);
    expect(await only('rut_receptor=11111111-1')).to.deep.equal([ids[13]]);
    expect(await only('rut_receptor=11.111.111-1')).to.deep.equal([ids[13]]);
    await t.db.dataSource.query(`UPDATE dtes SET fecha_emision = fecha_emision - 3 WHERE id = $1`, [ids[6]]);
    const d = new Date(Date.parse(`${today()}T12:00:00Z`) - 3 * 86_400_000).toISOString().slice(0, 10);
    expect(await only(`fecha_emision_hasta=${d}`)).to.deep.equal([ids[6]]);
    expect((await only(`fecha_emision_desde=${today()}`)).length).to.equal(ids.length - 1);
    expect(await only(`fecha_emision_desde=${d}&fecha_emision_hasta=${d}`)).to.deep.equal([ids[6]]);
    await t.db.dataSource.query(`UPDATE dtes SET receptor_estado = 'aceptado' WHERE id = $1`, [ids[7]]);
    expect(await only('receptor_estado=aceptado')).to.deep.equal([ids[7]]);
    await t.db.dataSource.query(`UPDATE dtes SET sii_status = 'EPR' WHERE id = $1`, [ids[8]]);
    expect(await only('sii_status=EPR')).to.deep.equal([ids[8]]);
    expect((await only('sii_status=aceptado_con_reparos')).length).to.equal(0);
    await t.db.dataSource.query(`UPDATE dtes SET sii_last_polled = now() WHERE id = $1`, [ids[9]]);
    await t.db.dataSource.query(`UPDATE dtes SET sii_last_polled = now() - interval '2 days' WHERE id = $1`, [
      ids[10],
    ]);
    const since = new Date(Date.now() - 3600_000).toISOString();
    expect(await only(`polled_since=${encodeURIComponent(since)}`)).to.deep.equal([ids[9]]);
  });

  it('answers every dte.list.* code for a bad filter', async () => {
    const cases: [string, string][] = [
      ['tipo_dte=abc', 'dte.list.tipo_invalido'],
      ['folio=12345678901', 'dte.list.folio_invalido'],
      ['folio=1.5', 'dte.list.folio_invalido'],
      ['rut_receptor=abc', 'dte.list.rut_receptor_invalido'],
      ['fecha_emision_desde=2024-13-01', 'dte.list.fecha_invalida'],
      ['fecha_emision_hasta=01-01-2024', 'dte.list.fecha_invalida'],
      ['polled_since=yesterday', 'dte.list.polled_since_invalido'],
      ['polled_since=2024-01-01', 'dte.list.polled_since_invalido'],
      ['receptor_estado=feliz', 'dte.list.receptor_estado_invalido'],
      ['sii_status=FOO', 'dte.list.status_desconocido'],
    ];
    for (const [q, code] of cases) {
      const res = await get(`/dtes?${q}`);
      expect(res.status, q).to.equal(422);
      expect(res.body, q).to.include({ code, next_action: 'fix_query' });
    }
  });

  it('shows only the key organization: another organization sees none of them', async () => {
    const other = await orgWithCafs(t, { tipos: [] });
    const res = await get('/dtes', other.key);
    expect(res.body.data).to.deep.equal([]);
    const one = await get(`/dtes/${ids[0]}`, other.key);
    expect(one.status).to.equal(404);
    expect(one.body.code).to.equal('not_found');
  });

  it('GET /dtes/:id gives the detail with items and EstadoDte; unknown ids are 404', async () => {
    const res = await get(`/dtes/${ids[11]}`);
    expect(res.status).to.equal(200);
    expectSchema('dte-detail.schema.json', res.body);
    expect(res.body).to.include({
      id: ids[11],
      tipo_dte: 33,
      rut_emisor: o.rut,
      rut_receptor: '77777777-7',
      razon_social_receptor: 'Cliente de Prueba SpA',
      monto_neto: 1000,
      iva: 190,
      monto_total: 1190,
      sii_status: 'queued',
      sii_glosa: null,
      track_id: null,
      sii_env: 'cert',
    });
    expect(res.body.estado).to.deep.equal(classify('queued'));
    expect(res.body.items).to.deep.equal([
      {
        position: 1,
        nombre: 'Martillo',
        descripcion: null,
        cantidad: 1,
        precio_unitario: 1000,
        monto_item: 1000,
        exento: false,
      },
    ]);
    for (const id of [randomUUID(), 'not-a-uuid']) {
      const miss = await get(`/dtes/${id}`);
      expect(miss.status).to.equal(404);
      expect(miss.body.code).to.equal('not_found');
    }
  });

  it('GET /dtes/:id/events starts with queued', async () => {
    const res = await get(`/dtes/${ids[0]}/events`);
    expect(res.status).to.equal(200);
    expectSchema('dte-events.schema.json', res.body);
    const data = res.body.data as { sii_status: string; glosa: string | null; observed_at: string }[];
    expect(data).to.have.length(1);
    expect(data[0]).to.include({ sii_status: 'queued', glosa: null });
  });

  it('GET /dtes/:id/xml is 404 dte.xml.not_yet_available until signed, then the signed bytes as application/xml', async () => {
    let res = await get(`/dtes/${ids[1]}/xml`);
    expect(res.status).to.equal(404);
    expect(res.body).to.include({ code: 'dte.xml.not_yet_available', next_action: 'poll_self' });
    // the signer stores the signed document in its column
    const xml =
      '<?xml version="1.0" encoding="ISO-8859-1"?>\n<DTE version="1.0"><Documento ID="F1T33"><Nombre>Ñandú</Nombre></Documento></DTE>';
    await t.db.dataSource.query('UPDATE dtes SET signed_xml = $2, signed_at = now() WHERE id = $1', [
      ids[1],
      xml,
    ]);
    const raw = await fetch(`${t.url}/dtes/${ids[1]}/xml`, { headers: { Authorization: `Bearer ${o.key}` } });
    expect(raw.status).to.equal(200);
    expect(raw.headers.get('content-type')).to.match(/^application\/xml/);
    expect(raw.headers.get('x-request-id')).to.be.a('string').and.not.equal('');
    const bytes = Buffer.from(await raw.arrayBuffer());
    expect(bytes.equals(Buffer.from(xml, 'latin1'))).to.equal(true);
    res = await get(`/dtes/${randomUUID()}/xml`);
    expect(res.status).to.equal(404);
    expect(res.body.code).to.equal('not_found');
  });

  it('reads need the dte:read scope', async () => {
    const s = await t.seed({ rut: o.rut, env: 'cert', scopes: ['caf:write'] });
    const res = await get('/dtes', s.api_key);
    expect(res.status).to.equal(403);
  });

  it('clamps a large limit to 100', async () => {
    const big = await orgWithCafs(t, { tipos: [33], hasta: 200 });
    for (let i = 0; i < 11; i++) {
      await Promise.all(Array.from({ length: 10 }, () => emit(t, big, body(33, big.rut, 100))));
    }
    const res = await get('/dtes?limit=1000', big.key);
    expect(res.body.data as Row[]).to.have.length(100);
    expect(res.body.next_cursor).to.be.a('string');
    const rest = await get(`/dtes?limit=1000&cursor=${res.body.next_cursor}`, big.key);
    expect(rest.body.data as Row[]).to.have.length(10);
    expect(rest.body.next_cursor).to.equal(null);
  });
});
