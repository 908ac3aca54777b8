// @ts-check
// The one way the pages call the api: JSON routes under /api/v1 with the session cookie (same
// origin, so the browser's Origin header passes the api's cross-origin check).

export const API = '/api/v1';

/** @returns {'cert' | 'prod'} the SII environment chosen in the header (certification by default) */
export function env() {
  return localStorage.getItem('sii_env') === 'prod' ? 'prod' : 'cert';
}

/**
 * @typedef {object} ApiResult
 * @property {number} status
 * @property {boolean} ok
 * @property {any} body the parsed JSON answer (null when there was none)
 */

/**
 * @typedef {object} ApiOptions
 * @property {boolean} [noEnv] do not add ?sii_env= (routes of the user or organization)
 * @property {boolean} [keepAuthErrors] 401/412 are the caller's to handle (no redirect)
 * @property {Record<string, string>} [headers]
 * @property {unknown} [json] a JSON body
 * @property {FormData} [form] a multipart body
 * @property {string} [bearer] an API key: Authorization Bearer, no cookie
 */

/** The page this script runs on (data-page of <main>). */
export function currentPage() {
  const main = document.querySelector('main');
  return (main && main.dataset.page) || '';
}

/**
 * One call to the api; 401 sends to the login page, 412 org.required to the organization page.
 * @param {string} method
 * @param {string} path
 * @param {ApiOptions} [opts]
 * @returns {Promise<ApiResult>}
 */
export async function api(method, path, opts = {}) {
  const sep = path.includes('?') ? '&' : '?';
  const url = opts.noEnv || opts.bearer ? API + path : `${API}${path}${sep}sii_env=${env()}`;
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json', ...(opts.headers || {}) };
  if (opts.bearer) headers.Authorization = `Bearer ${opts.bearer}`;
  /** @type {BodyInit | undefined} */
  let body;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form) body = opts.form;
  const res = await fetch(url, {
    method,
    headers,
    body,
    credentials: opts.bearer ? 'omit' : 'same-origin',
  });
  const text = await res.text();
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  const page = currentPage();
  if (!opts.keepAuthErrors && !opts.bearer) {
    if (res.status === 401 && page !== '/ingresar') location.assign('/dashboard/ingresar');
    if (res.status === 412 && parsed && parsed.code === 'org.required' && page !== '/organizacion') {
      location.assign('/dashboard/organizacion');
    }
  }
  return { status: res.status, ok: res.ok, body: parsed };
}
