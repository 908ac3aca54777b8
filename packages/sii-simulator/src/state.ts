/**
 * State of the simulator: one `EnvState` per SII environment, the shared trigger queue,
 * exchange rates and the clock. In memory; with SII_SIMULATOR_STATE_FILE every data property here
 * is also kept on disk across restarts by snapshot.ts (generic: new fields need nothing there).
 * `POST /admin/reset` starts from scratch, keeping only the SII keys.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type {
  BheRecord,
  Company,
  DocumentRecord,
  PurchaseRecord,
  SeedRecord,
  SiiEnv,
  TokenRecord,
  UploadRecord,
} from './types';
import { TriggerQueue } from './triggers';

export class EnvState {
  readonly companies = new Map<string, Company>();
  readonly seeds = new Map<string, SeedRecord>();
  readonly tokens = new Map<string, TokenRecord>();
  readonly uploads = new Map<string, UploadRecord>();
  /** key `${rutEmisor}|${tipo}|${folio}`: every document the SII processed (folio used) */
  readonly documents = new Map<string, DocumentRecord>();
  /** sha256 of every accepted upload (STATUS 0) → track id */
  readonly uploadHashes = new Map<string, string>();
  /** last folio granted per `${rutEmisor}|${tipo}` */
  readonly lastFolio = new Map<string, number>();
  readonly purchases: PurchaseRecord[] = [];
  /** key `${rutEmisor}|${numero}`: the BHEs issued here (kept across restarts like the rest) */
  readonly bhes = new Map<string, BheRecord>();
  /** last BHE number given per issuer (the SII numbers each taxpayer's BHEs from 1) */
  readonly lastBhe = new Map<string, number>();
  private nextTrack: number;
  private nextSeed: number;

  constructor(readonly env: SiiEnv) {
    this.nextTrack = (env === 'cert' ? 100_000_000 : 500_000_000) + randomInt(1000) * 1000;
    this.nextSeed = randomInt(1, 1_000_000) * 1000;
  }

  private queue: Promise<unknown> = Promise.resolve();

  /**
   * Runs upload processing one at a time per environment: the folio and repeated-file checks
   * and the records they read must not interleave across an await (two concurrent sends of the
   * same folio would otherwise both pass).
   */
  serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  newTrackId(): string {
    return String(this.nextTrack++).padStart(10, '0');
  }

  newSeed(): string {
    return String(this.nextSeed++).padStart(12, '0');
  }

  newToken(): string {
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
    const bytes = randomBytes(13);
    return Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('');
  }

  documentKey(rutEmisor: string, tipo: number, folio: number): string {
    return `${rutEmisor}|${tipo}|${folio}`;
  }

  /** is the RUT allowed to act (send, query, register events) for the company? */
  isAuthorized(rut: string, company: string): boolean {
    return this.companies.get(company)?.senders.has(rut) ?? false;
  }

  /** is the RUT enrolled as a user of any company (the `-07` check of GetTokenFromSeed)? */
  isKnownUser(rut: string): boolean {
    for (const c of this.companies.values()) if (c.senders.has(rut)) return true;
    return false;
  }
}

export interface ExchangeRate {
  moneda: string;
  fecha: string;
  valor: number;
}

export class SimulatorState {
  readonly env: Record<SiiEnv, EnvState> = { cert: new EnvState('cert'), prod: new EnvState('prod') };
  readonly triggers = new TriggerQueue();
  /** key `${moneda}|${fecha}` */
  readonly rates = new Map<string, ExchangeRate>();
  /** added to the clock: lets a test or a demo jump over the 8-day window */
  clockOffsetMs = 0;

  constructor(private readonly clock: () => number) {}

  now(): number {
    return this.clock() + this.clockOffsetMs;
  }

  reset(): void {
    this.env.cert = new EnvState('cert');
    this.env.prod = new EnvState('prod');
    this.triggers.clear();
    this.rates.clear();
    this.clockOffsetMs = 0;
  }
}
