/**
 * A running simulator with one enrolled company, its certificate holder logged in, and helpers
 * that build real signed EnvioDTEs with @dte/engine (the way the service will).
 */
import {
  buildEnvioDte,
  createTestCaf,
  createTestP12,
  createTestSiiKey,
  parseCaf,
  readP12,
  santiagoDate,
  signSeedDocument,
  stampAndSignDte,
  type Caf,
  type DteDocument,
  type SigningCredential,
} from '@dte/engine';
import { startSiiSimulator, type RunningSimulator, type SimulatorOptions } from '../../src';
import { admin, getSeed, getToken, type Env } from './client';

export const COMPANY = '76123456-0';
export const SENDER = '11111111-1';
export const RECEPTOR = '77777777-7';
export const OTHER_USER = '22222222-2';
export const FCH_RESOL = '2024-03-01';

const credentials = new Map<string, SigningCredential>();

/** a test certificate for the RUT (RSA-2048 is slow to make: made once per RUT and run) */
export function credentialFor(
  rut: string,
  validity?: { notBefore: Date; notAfter: Date },
): SigningCredential {
  const key = `${rut}|${validity?.notBefore.toISOString() ?? ''}`;
  let c = credentials.get(key);
  if (!c) {
    c = readP12(createTestP12({ rut, name: `Usuario ${rut}`, password: 'x', ...validity }), 'x');
    credentials.set(key, c);
  }
  return c;
}

/** the date in Chile, as the SII and the engine count days */
export function today(offsetDays = 0): string {
  return santiagoDate(new Date(Date.now() + offsetDays * 86_400_000));
}

export class World {
  token: Partial<Record<Env, string>> = {};
  private constructor(readonly sim: RunningSimulator) {}

  static async start(options: Partial<SimulatorOptions> = {}): Promise<World> {
    const sim = await startSiiSimulator({
      port: 0,
      timings: { registerMs: 0, stepMs: 0 },
      cafKeyBits: 512,
      ...options,
    });
    return new World(sim);
  }

  base(env: Env = 'cert'): string {
    return `${this.sim.url}/${env}`;
  }

  async enrol(env: Env = 'cert', company = COMPANY, senders = [SENDER], fchResol = FCH_RESOL, nroResol = 0) {
    const r = await admin(this.sim.url, 'PUT', `/admin/${env}/companies/${company}`, {
      razonSocial: 'EMPRESA DE PRUEBA SPA',
      fchResol,
      nroResol,
      senders,
    });
    if (r.status !== 200) throw new Error(`enrol failed: ${JSON.stringify(r.json)}`);
  }

  async login(env: Env = 'cert', rut = SENDER): Promise<string> {
    const seed = await getSeed(this.base(env));
    const t = await getToken(this.base(env), signSeedDocument(seed, credentialFor(rut)));
    if (t.estado !== '00' || !t.token) throw new Error(`login failed: ${t.estado} ${t.glosa}`);
    this.token[env] = t.token;
    return t.token;
  }

  /** a CAF granted by the simulator's folio endpoint */
  async grantCaf(env: Env, tipoDte: number, cantidad: number, company = COMPANY): Promise<Caf> {
    const res = await fetch(`${this.base(env)}/folios`, {
      method: 'POST',
      headers: { Cookie: `TOKEN=${this.token[env]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ rutEmisor: company, tipoDte, cantidad }),
    });
    if (res.status !== 200) throw new Error(`CAF request failed: ${res.status} ${await res.text()}`);
    return parseCaf(await res.text());
  }

  /** a CAF made outside the simulator's grants, signed by its SII key (or another key) */
  foreignCaf(
    env: Env,
    opts: { desde: number; hasta: number; fechaAutorizacion: string; otherKey?: boolean },
  ): Caf {
    const siiKey = opts.otherKey ? createTestSiiKey(env === 'cert' ? 100 : 300) : this.sim.siiKeys[env];
    return parseCaf(
      createTestCaf({
        siiKey,
        rutEmisor: COMPANY,
        razonSocial: 'EMPRESA DE PRUEBA SPA',
        tipoDte: 33,
        desde: opts.desde,
        hasta: opts.hasta,
        fechaAutorizacion: opts.fechaAutorizacion,
        keyBits: 512,
      }),
      { now: new Date(`${opts.fechaAutorizacion}T12:00:00Z`) },
    );
  }

  async close(): Promise<void> {
    await this.sim.close();
  }
}

export function factura(
  folio: number,
  opts: { neto?: number; fchEmis?: string; receptor?: string } = {},
): DteDocument {
  const neto = opts.neto ?? 10000;
  const iva = Math.round(neto * 0.19);
  return {
    Encabezado: {
      IdDoc: { TipoDTE: 33, Folio: folio, FchEmis: opts.fchEmis ?? today() },
      Emisor: {
        RUTEmisor: COMPANY,
        RznSoc: 'EMPRESA DE PRUEBA SPA',
        GiroEmis: 'Servicios informaticos',
        Acteco: [620200],
        DirOrigen: 'Av. Siempre Viva 123',
        CmnaOrigen: 'Santiago',
      },
      Receptor: {
        RUTRecep: opts.receptor ?? RECEPTOR,
        RznSocRecep: 'CLIENTE LTDA',
        GiroRecep: 'Comercio',
        DirRecep: 'Calle Uno 1',
        CmnaRecep: 'Providencia',
      },
      Totales: { MntNeto: neto, TasaIVA: 19, IVA: iva, MntTotal: neto + iva },
    },
    Detalle: [{ NroLinDet: 1, NmbItem: 'Servicio de prueba', QtyItem: 1, PrcItem: neto, MontoItem: neto }],
  };
}

export function signDte(doc: DteDocument, caf: Caf, rut = SENDER): string {
  return stampAndSignDte(doc, { caf, credential: credentialFor(rut), timestamp: new Date() });
}

export function envelope(
  dtes: string[],
  opts: { rutEnvia?: string; fchResol?: string; nroResol?: number; rutEmisor?: string } = {},
): Buffer {
  const rutEnvia = opts.rutEnvia ?? SENDER;
  return buildEnvioDte(dtes, {
    rutEmisor: opts.rutEmisor ?? COMPANY,
    rutEnvia,
    fchResol: opts.fchResol ?? FCH_RESOL,
    nroResol: opts.nroResol ?? 0,
    credential: credentialFor(rutEnvia),
    timestamp: new Date(),
  });
}
