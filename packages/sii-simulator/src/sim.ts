/** What every handler needs: the state, the options and the SII keys. */
import type { SiiKey } from './engine';
import type { SimulatorOptions } from './options';
import type { EnvState, SimulatorState } from './state';
import type { SiiEnv, TokenRecord } from './types';

export interface Sim {
  state: SimulatorState;
  options: SimulatorOptions;
  siiKeys: Record<SiiEnv, SiiKey>;
}

export type TokenCheck =
  { ok: true; token: TokenRecord } | { ok: false; reason: 'missing' | 'unknown' | 'expired' };

export function checkToken(env: EnvState, token: string | undefined, now: number): TokenCheck {
  if (!token) return { ok: false, reason: 'missing' };
  const t = env.tokens.get(token);
  if (!t) return { ok: false, reason: 'unknown' };
  if (now >= t.expiresAt) return { ok: false, reason: 'expired' };
  return { ok: true, token: t };
}

/** may this RUT act for the company? (auto-enrol: yes, and the company is created) */
export function authorize(sim: Sim, env: EnvState, rut: string, company: string): boolean {
  if (env.isAuthorized(rut, company)) return true;
  if (!sim.options.autoEnrol) return false;
  enrol(env, company, rut);
  return true;
}

export function enrol(env: EnvState, company: string, rut: string): void {
  let c = env.companies.get(company);
  if (!c) {
    c = { rut: company, razonSocial: `EMPRESA ${company}`, fchResol: '', nroResol: 0, senders: new Set() };
    env.companies.set(company, c);
  }
  c.senders.add(rut);
}
