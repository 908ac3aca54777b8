/**
 * Figures of the client against the in-process SII simulator on this machine: login
 * (seed + engine signature + token), QueryEstUp, and DTEUpload of envelopes of several sizes.
 * Prints the configuration and p50/max in ms. Run:
 *   npx tsx packages/sii-client/bench/roundtrip.ts [uploadSizes=1,50] [logins=20] [queries=50]
 */
import {
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  parseCaf,
  readP12,
  stampAndSignDte,
  type DteDocument,
} from '@dte/engine';
import { startSiiSimulator } from '@dte/sii-simulator';

import { SiiClient, simulatorEndpoints } from '../src';

const COMPANY = '76123456-0';
const SENDER = '11111111-1';

function factura(folio: number): DteDocument {
  return {
    Encabezado: {
      IdDoc: { TipoDTE: 33, Folio: folio, FchEmis: new Date().toISOString().slice(0, 10) },
      Emisor: {
        RUTEmisor: COMPANY,
        RznSoc: 'EMPRESA DE PRUEBA SPA',
        GiroEmis: 'Servicios',
        Acteco: [620200],
      },
      Receptor: { RUTRecep: '77777777-7', RznSocRecep: 'CLIENTE LTDA', GiroRecep: 'Comercio' },
      Totales: { MntNeto: 10000, TasaIVA: 19, IVA: 1900, MntTotal: 11900 },
    },
    Detalle: [{ NroLinDet: 1, NmbItem: 'Servicio', QtyItem: 1, PrcItem: 10000, MontoItem: 10000 }],
  };
}

function stats(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const p50 = s[Math.floor((s.length - 1) / 2)]!;
  return `n=${s.length} p50=${p50.toFixed(1)} ms max=${s[s.length - 1]!.toFixed(1)} ms`;
}

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await f();
  return [v, performance.now() - t0];
}

async function main(): Promise<void> {
  const sizes = (process.argv[2] ?? '1,50').split(',').map(Number);
  const logins = Number(process.argv[3] ?? 20);
  const queries = Number(process.argv[4] ?? 50);
  const sim = await startSiiSimulator({ port: 0, autoEnrol: true, timings: { registerMs: 0, stepMs: 0 } });
  try {
    const client = new SiiClient({ endpoints: simulatorEndpoints(sim.url) });
    const credential = readP12(createTestP12({ rut: SENDER, password: 'pw' }), 'pw');
    const caf = parseCaf(
      createTestCaf({
        siiKey: sim.siiKeys.cert,
        rutEmisor: COMPANY,
        razonSocial: 'EMPRESA DE PRUEBA SPA',
        tipoDte: 33,
        desde: 1,
        hasta: 100000,
        fechaAutorizacion: new Date().toISOString().slice(0, 10),
        keyBits: 512,
      }),
    );
    console.log(
      `config: simulator in-process (${sim.url}), node ${process.version}, RSA-2048 test certificate, ` +
        `uploads of ${sizes.join(',')} DTE(s), ${logins} logins, ${queries} QueryEstUp`,
    );

    const loginTimes: number[] = [];
    for (let i = 0; i < logins; i++) {
      loginTimes.push((await timed(() => client.getToken('cert', credential, { fresh: true })))[1]);
    }
    console.log(`login (getSeed + signSeedDocument + getToken): ${stats(loginTimes)}`);

    const sii = client.session(credential);
    let folio = 1;
    let lastTrack = '';
    for (const size of sizes) {
      const now = new Date();
      const dtes = Array.from({ length: size }, () =>
        stampAndSignDte(factura(folio++), { caf, credential, timestamp: now }),
      );
      const xml = buildEnvioDte(dtes, {
        rutEmisor: COMPANY,
        rutEnvia: SENDER,
        fchResol: '2024-03-01',
        nroResol: 0,
        credential,
        timestamp: now,
      });
      const [out, ms] = await timed(() => sii.uploadEnvio({ env: 'cert', rutCompany: COMPANY, xml }));
      if (out.kind !== 'accepted') throw new Error(`upload of ${size} not accepted: ${out.kind}`);
      lastTrack = out.trackId;
      console.log(
        `DTEUpload of ${size} DTE (${(xml.length / 1024).toFixed(0)} KiB, simulator checks included): ${ms.toFixed(0)} ms`,
      );
    }

    const queryTimes: number[] = [];
    for (let i = 0; i < queries; i++) {
      queryTimes.push(
        (
          await timed(() => sii.queryUploadStatus({ env: 'cert', rutCompany: COMPANY, trackId: lastTrack }))
        )[1],
      );
    }
    console.log(`QueryEstUp (cached token): ${stats(queryTimes)}`);
  } finally {
    await sim.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
