import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { admin, estDte, estUp, getSeed, getToken, upload } from './support/client';
import {
  independentDte,
  independentEnvio,
  opensslIdentity,
  signSeedWithXmlsec1,
  type OpensslIdentity,
} from './support/independent';
import { COMPANY, FCH_RESOL, RECEPTOR, SENDER, today, World } from './support/world';

describe('sii-simulator: a login and an EnvioDTE made by openssl and xmlsec1 only', function () {
  this.timeout(120_000);
  let w: World;
  let dir: string;
  let id: OpensslIdentity;
  let token: string;
  let cafXml: string;
  const stamp = () => new Date().toISOString().slice(0, 19);

  before(async () => {
    w = await World.start();
    await w.enrol('cert');
    dir = mkdtempSync(path.join(tmpdir(), 'sii-sim-indep-'));
    id = opensslIdentity(dir, SENDER);
    const t = await getToken(w.base('cert'), signSeedWithXmlsec1(dir, await getSeed(w.base('cert')), id));
    expect(t.estado).to.equal('00');
    token = t.token!;
    const res = await fetch(`${w.base('cert')}/folios`, {
      method: 'POST',
      headers: { Cookie: `TOKEN=${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rutEmisor: COMPANY, tipoDte: 33, cantidad: 5 }),
    });
    cafXml = await res.text();
  });
  after(async () => {
    await w.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const dte = (folio: number, extra: { tedKeyPem?: string } = {}) =>
    independentDte(
      dir,
      {
        folio,
        fchEmis: today(),
        rutEmisor: COMPANY,
        rutReceptor: RECEPTOR,
        neto: 1000,
        cafXml,
        timestamp: stamp(),
        ...extra,
      },
      id,
    );
  const envio = (dtes: string[]) =>
    independentEnvio(
      dir,
      dtes,
      { rutEmisor: COMPANY, rutEnvia: SENDER, fchResol: FCH_RESOL, nroResol: 0, timestamp: stamp() },
      id,
    );

  it('is schema-valid by xmllint and accepted with EPR; QueryEstDte answers DOK', async () => {
    const file = envio([dte(1), dte(2)]);
    const f = path.join(dir, 'envio-ok.xml');
    writeFileSync(f, file);
    const schema = path.resolve(
      __dirname,
      '..',
      '..',
      '..',
      '..',
      'shared',
      'sii',
      'schemas',
      'EnvioDTE_v10.xsd',
    );
    execFileSync('xmllint', ['--noout', '--schema', schema, f], { stdio: 'ignore' }); // throws when invalid
    const up = await upload(w.base('cert'), { token, sender: SENDER, company: COMPANY, file });
    expect(up.status).to.equal('0');
    const st = await estUp(w.base('cert'), COMPANY, up.trackId!, token);
    expect([st.estado, st.informados[0], st.aceptados[0], st.rechazados[0]]).to.deep.equal(['EPR', 2, 2, 0]);
    const q = await estDte(w.base('cert'), {
      consultante: SENDER,
      company: COMPANY,
      receptor: RECEPTOR,
      tipo: 33,
      folio: 2,
      fecha: today(),
      monto: 1190,
      token,
    });
    expect(q.estado).to.equal('DOK');
  });

  it('rejects the document whose TED was signed with a key that is not the CAF key (RCH)', async () => {
    const other = path.join(dir, 'other.pem');
    execFileSync('openssl', ['genrsa', '-out', other, '512'], { stdio: 'ignore' });
    const wrongKey = execFileSync('openssl', ['rsa', '-in', other, '-traditional'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    }).toString();
    const up = await upload(w.base('cert'), {
      token,
      sender: SENDER,
      company: COMPANY,
      file: envio([dte(3), dte(4, { tedKeyPem: wrongKey })]),
    });
    const st = await estUp(w.base('cert'), COMPANY, up.trackId!, token);
    expect([st.estado, st.aceptados[0], st.rechazados[0]]).to.deep.equal(['EPR', 1, 1]);
    const detail = (await admin(w.sim.url, 'GET', `/admin/cert/uploads/${up.trackId}`)).json as {
      documents: { folio: number; detail: string[] }[];
    };
    expect(detail.documents.find((d) => d.folio === 4)?.detail.join(' ')).to.match(/TED/);
  });
});
