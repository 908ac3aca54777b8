/**
 * The SII simulator's admin API for the tests (its enrolments, register, triggers), for the api
 * harness in process (`services/api/test/support/test-api.ts` re-exports it) and for the
 * process-level pipeline harness alike: plain fetch, no api module.
 */

/** The simulator's base URL, or a harness that holds the simulator. */
export type SimTarget = string | { sim: { url: string } };

const baseUrl = (target: SimTarget): string => (typeof target === 'string' ? target : target.sim.url);

/** One admin call, its JSON answer; anything but a 2xx throws. */
export async function simAdmin<T = unknown>(
  target: SimTarget,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${baseUrl(target)}${path}`, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`simulator ${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The certification resolution the tests' companies hold (number 0 of this date). */
export const FCH_RESOL = '2024-01-01';

/**
 * The company enrolled at the SII (simulator, certification) with resolution 0 of FCH_RESOL;
 * `senders` (default the company itself) may act for it.
 */
export async function enrolAtSii(
  target: SimTarget,
  rut: string,
  opts: { senders?: string[]; razonSocial?: string } = {},
): Promise<void> {
  await simAdmin(target, 'PUT', `/admin/cert/companies/${rut}`, {
    ...(opts.razonSocial !== undefined ? { razonSocial: opts.razonSocial } : {}),
    fchResol: FCH_RESOL,
    nroResol: 0,
    senders: opts.senders ?? [rut],
  });
}
