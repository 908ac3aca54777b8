import { SCOPE_DESCRIPTIONS, isOAuthScope } from './scopes';

/** A company the signed-in user may connect an agent to. */
export interface GrantableCompany {
  organizationId: string;
  organizationName: string;
  companyId: string;
  rut: string;
  razonSocial: string;
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="es-CL"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
h1{font-size:1.4rem}ul.scopes li{margin:.4rem 0}.scope{font-family:monospace;color:#555}
button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}label{display:block;margin:.6rem 0 .2rem}
select{font-size:1rem;padding:.3rem;width:100%}.warn{background:#fff4e5;padding:.6rem;border-radius:4px}</style>
</head><body>${body}</body></html>`;
}

/** The consent page: who asks, for which scopes, for which company and environment. */
export function consentPage(opts: {
  uid: string;
  /** the anti-forgery token the confirm step checks */
  csrf: string;
  /** where the authorization will be sent (its host is shown: a name is only what the client says) */
  redirectUri: string;
  clientName: string;
  userEmail: string;
  scopes: string[];
  companies: GrantableCompany[];
}): string {
  const items = opts.scopes
    .filter(isOAuthScope)
    .map(
      (s) =>
        `<li data-scope="${esc(s)}"><label><input type="checkbox" name="scope" value="${esc(s)}" checked form="consent"> ${esc(SCOPE_DESCRIPTIONS[s])} <span class="scope">(${esc(s)})</span></label></li>`,
    )
    .join('');
  const options = opts.companies
    .map(
      (c) =>
        `<option value="${esc(c.companyId)}">${esc(c.razonSocial)} (${esc(c.rut)}), ${esc(c.organizationName)}</option>`,
    )
    .join('');
  const noCompanies = opts.companies.length === 0;
  let redirectHost = opts.redirectUri;
  try {
    redirectHost = new URL(opts.redirectUri).host;
  } catch {
    // shown as given
  }
  return page(
    'Autorizar acceso',
    `<h1>${esc(opts.clientName)} quiere acceder a tu cuenta</h1>
<p>Sesión iniciada como <strong>${esc(opts.userEmail)}</strong>.</p>
<p id="redirect-host">La autorización se enviará a <strong>${esc(redirectHost)}</strong>. Si no reconoces esa dirección, rechaza.</p>
<p>Si lo autorizas, podrá (desmarca lo que no quieras conceder):</p>
<ul class="scopes">${items}</ul>
<form id="consent" method="post" action="/oauth/interaction/${esc(opts.uid)}/confirm">
<input type="hidden" name="csrf" value="${esc(opts.csrf)}">
${
  noCompanies
    ? '<p class="warn">No perteneces a ninguna organización con empresas; no hay nada que autorizar.</p>'
    : `<label for="company">Empresa</label><select id="company" name="company_id">${options}</select>
<label for="environment">Ambiente</label><select id="environment" name="environment">
<option value="cert">Certificación (pruebas)</option><option value="prod">Producción</option></select>`
}
<p class="warn">Las acciones irreversibles o que mueven dinero (anular o corregir un documento con una nota de crédito o débito, forzar una regla con override, aceptar o reclamar una factura) quedarán pendientes hasta que las apruebes en el panel. Podrás ver y desconectar este agente en el panel (Agentes); su acceso dura 14 días, aunque cierres la sesión del panel, y después deberás autorizarlo de nuevo.</p>
<p><button type="submit" id="approve"${noCompanies ? ' disabled' : ''}>Autorizar</button>
<button type="submit" id="deny" formaction="/oauth/interaction/${esc(opts.uid)}/abort">Rechazar</button></p>
</form>`,
  );
}

/** Shown when no dashboard session comes with the request. */
export function loginRequiredPage(opts: { loginUrl: string | null }): string {
  return page(
    'Inicia sesión',
    `<h1>Inicia sesión para continuar</h1>
<p>Para autorizar a una aplicación necesitas una sesión abierta en el panel.</p>
${
  opts.loginUrl
    ? `<p><a id="login" href="${esc(opts.loginUrl)}">Iniciar sesión en el panel</a>; después vuelve a esta página.</p>`
    : '<p>Abre el panel en otra pestaña, inicia sesión y recarga esta página.</p>'
}`,
  );
}

export function errorPage(message: string): string {
  return page('Error', `<h1>No se pudo completar la autorización</h1><p>${esc(message)}</p>`);
}
