// @ts-check
// /ingresar: login and sign-up; `return_to` goes back to a path of this same origin only.
import { api } from '../lib/api.js';
import { notice } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { onSubmit, text } from '../lib/forms.js';

/**
 * `return_to` of the login page (e.g. the OAuth consent step sends the user here and back):
 * only a path on this same origin is honoured, never another site (no open redirect).
 * @returns {string | null}
 */
export function returnTo() {
  const raw = new URLSearchParams(location.search).get('return_to');
  // eslint-disable-next-line no-control-regex
  if (!raw || /[\\\u0000-\u001f]/.test(raw)) return null;
  let u;
  try {
    u = new URL(raw, location.origin);
  } catch {
    return null;
  }
  const sameOrigin = raw.startsWith(`${location.origin}/`) || (raw.startsWith('/') && !raw.startsWith('//'));
  if (!sameOrigin || u.origin !== location.origin) return null;
  return u.pathname + u.search + u.hash;
}

/** @type {import('./index.js').PageRun} */
export default function ingresar() {
  const back = returnTo();
  /** @param {{ organizacion_actual?: string | null }} b */
  const after = (b) =>
    location.assign(back || (b.organizacion_actual ? '/dashboard/documentos' : '/dashboard/organizacion'));
  onSubmit('form-login', async (_f, d) => {
    const res = await api('POST', '/auth/login', {
      noEnv: true,
      keepAuthErrors: true,
      json: { email: text(d, 'email'), password: String(d.get('password') ?? '') },
    });
    if (!res.ok) return notice('error', describe(res));
    after(res.body);
  });
  onSubmit('form-signup', async (_f, d) => {
    /** @type {{ email: string, password: string, nombre?: string }} */
    const json = { email: text(d, 'email'), password: String(d.get('password') ?? '') };
    if (text(d, 'nombre')) json.nombre = text(d, 'nombre');
    const res = await api('POST', '/auth/signup', { noEnv: true, keepAuthErrors: true, json });
    if (!res.ok) return notice('error', describe(res));
    after(res.body);
  });
}
