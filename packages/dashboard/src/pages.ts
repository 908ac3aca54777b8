/**
 * The dashboard's pages: server-rendered HTML shells (navigation, headings, forms, empty tables
 * with captions) in Spanish (Chile). The data comes from the api's JSON routes, fetched by
 * static/app.js with the session cookie; no page embeds user data, so nothing here needs
 * escaping beyond the fixed strings.
 */
import { AGENTS_PAGE } from './agents-page';
import { PLAN_PAGE } from './plan-page';

export interface Page {
  /** path under /dashboard */
  path: string;
  title: string;
  /** shown in the navigation (absent: not in the navigation) */
  nav?: string;
  body: string;
}

const field = (id: string, label: string, input: string, help = '') =>
  `<div class="field"><label for="${id}">${label}</label>${input}${help ? `<small id="${id}-ayuda">${help}</small>` : ''}<span class="field-error" id="${id}-error" aria-live="polite"></span></div>`;

const TIPOS = `<option value="">Todos</option><option value="33">33 Factura electrónica</option><option value="34">34 Factura exenta</option><option value="46">46 Factura de compra</option><option value="52">52 Guía de despacho</option><option value="56">56 Nota de débito</option><option value="61">61 Nota de crédito</option><option value="110">110 Factura de exportación</option><option value="112">112 NC de exportación</option>`;

export const PAGES: Page[] = [
  {
    path: '/ingresar',
    title: 'Ingresar',
    body: `
<h1>Emisión de documentos tributarios electrónicos</h1>
<div class="two">
<section aria-labelledby="t-login"><h2 id="t-login">Ingresar</h2>
<form id="form-login" novalidate>
${field('login-email', 'Correo electrónico', '<input id="login-email" name="email" type="email" autocomplete="username" required>')}
${field('login-password', 'Contraseña', '<input id="login-password" name="password" type="password" autocomplete="current-password" required>')}
<button type="submit">Ingresar</button>
</form></section>
<section aria-labelledby="t-signup"><h2 id="t-signup">Crear una cuenta</h2>
<form id="form-signup" novalidate>
${field('signup-nombre', 'Nombre', '<input id="signup-nombre" name="nombre" autocomplete="name" maxlength="100">')}
${field('signup-email', 'Correo electrónico', '<input id="signup-email" name="email" type="email" autocomplete="email" required>')}
${field('signup-password', 'Contraseña', '<input id="signup-password" name="password" type="password" autocomplete="new-password" minlength="10" maxlength="200" required aria-describedby="signup-password-ayuda">', 'Al menos 10 caracteres.')}
<button type="submit">Crear cuenta</button>
</form></section>
</div>`,
  },
  {
    path: '/organizacion',
    title: 'Organización',
    nav: 'Organización',
    body: `
<h1>Organización</h1>
<section aria-labelledby="t-mias"><h2 id="t-mias">Mis organizaciones</h2>
<table id="tabla-organizaciones"><caption>Organizaciones a las que pertenece</caption>
<thead><tr><th scope="col">Nombre</th><th scope="col">RUT</th><th scope="col">Rol</th><th scope="col">Acción</th></tr></thead><tbody></tbody></table>
<div id="org-actual"></div>
</section>
<div class="two">
<section aria-labelledby="t-crear"><h2 id="t-crear">Registrar una empresa</h2>
<p>Se verifica la situación tributaria del RUT en el SII y que usted actúa por la empresa. Usted quedará como dueño (owner).</p>
<form id="form-organizacion" novalidate>
${field('org-rut', 'RUT de la empresa', '<input id="org-rut" name="rut" required placeholder="76086428-5" data-rut aria-describedby="org-rut-ayuda">', 'Sin puntos, con guion y dígito verificador.')}
${field('org-nombre', 'Nombre de la organización (opcional)', '<input id="org-nombre" name="nombre" maxlength="100">')}
<fieldset><legend>Acreditación ante el SII</legend>
<p>Presente el certificado digital de una persona autorizada por el SII para operar con este RUT. Se usa solo para consultar al SII y no se guarda.</p>
${field('org-cert', 'Certificado .p12 o .pfx', '<input id="org-cert" name="certificado" type="file" accept=".p12,.pfx,application/x-pkcs12" required>')}
${field('org-cert-clave', 'Contraseña del certificado', '<input id="org-cert-clave" name="certificado_password" type="password" autocomplete="off" required>')}
</fieldset>
<fieldset><legend>Datos del emisor (para los documentos)</legend>
${field('org-giro', 'Giro', '<input id="org-giro" name="giro" maxlength="80">')}
${field('org-direccion', 'Dirección', '<input id="org-direccion" name="direccion" maxlength="70">')}
${field('org-comuna', 'Comuna', '<input id="org-comuna" name="comuna" maxlength="20">')}
${field('org-acteco', 'Código de actividad económica', '<input id="org-acteco" name="actividad_economica" inputmode="numeric" pattern="[0-9]{1,6}">')}
${field('org-resol-num', 'N° resolución de certificación SII', '<input id="org-resol-num" name="resolucion_cert_numero" inputmode="numeric" pattern="[0-9]{1,6}">')}
${field('org-resol-fecha', 'Fecha de la resolución', '<input id="org-resol-fecha" name="resolucion_cert_fecha" type="date">')}
</fieldset>
<button type="submit">Registrar empresa</button>
</form></section>
<section aria-labelledby="t-acceso"><h2 id="t-acceso">Solicitar acceso</h2>
<p>Si su empresa ya está registrada, pida a sus dueños que lo incorporen.</p>
<form id="form-acceso" novalidate>
${field('acceso-rut', 'RUT de la empresa', '<input id="acceso-rut" name="rut" required data-rut>')}
<button type="submit">Solicitar acceso</button>
</form></section>
</div>
<section aria-labelledby="t-situacion"><h2 id="t-situacion">Situación tributaria</h2>
<p id="situacion">—</p><button type="button" id="btn-revalidar">Revalidar situación en el SII</button></section>`,
  },
  {
    path: '/documentos',
    title: 'Documentos',
    nav: 'Documentos',
    body: `
<h1>Documentos emitidos</h1>
<form id="form-filtros" class="filters" aria-label="Filtros">
${field('f-tipo', 'Tipo', `<select id="f-tipo" name="tipo_dte">${TIPOS}</select>`)}
${field('f-folio', 'Folio', '<input id="f-folio" name="folio" inputmode="numeric" pattern="[0-9]{1,10}">')}
${field('f-rut', 'RUT receptor', '<input id="f-rut" name="rut_receptor" data-rut>')}
${field('f-desde', 'Emitidos desde', '<input id="f-desde" name="fecha_emision_desde" type="date">')}
${field('f-hasta', 'hasta', '<input id="f-hasta" name="fecha_emision_hasta" type="date">')}
${field('f-estado', 'Estado SII', '<input id="f-estado" name="sii_status" list="estados-sii" maxlength="40">')}
<datalist id="estados-sii"><option value="EPR"><option value="RPR"><option value="RCH"><option value="RCT"><option value="queued"><option value="stuck"></datalist>
<button type="submit">Filtrar</button>
</form>
<table id="tabla-documentos"><caption>Documentos (más recientes primero)</caption>
<thead><tr><th scope="col">Tipo</th><th scope="col">Folio</th><th scope="col">Receptor</th><th scope="col">Fecha</th><th scope="col" class="num">Total</th><th scope="col">Estado SII</th></tr></thead><tbody></tbody></table>
<button type="button" id="btn-siguiente" hidden>Página siguiente</button>`,
  },
  {
    path: '/documentos/:id',
    title: 'Documento',
    body: `
<p><a href="/dashboard/documentos">← Documentos</a></p>
<h1 id="doc-titulo">Documento</h1>
<dl id="doc-datos" class="grid"></dl>
<p class="actions"><a id="doc-xml" class="button" download>Descargar XML</a> <a id="doc-pdf" class="button" download>Descargar PDF</a> <button type="button" id="btn-actualizar">Actualizar estado</button></p>
<section aria-labelledby="t-linea"><h2 id="t-linea">Línea de tiempo</h2><ol id="doc-eventos" class="timeline"></ol></section>`,
  },
  {
    path: '/emitir',
    title: 'Emitir',
    nav: 'Emitir',
    body: `
<h1>Emitir una factura electrónica</h1>
<form id="form-emitir" novalidate>
<fieldset><legend>Receptor</legend>
${field('e-rut', 'RUT', '<input id="e-rut" name="rut" required data-rut list="lista-contrapartes" autocomplete="off">')}
<datalist id="lista-contrapartes"></datalist>
${field('e-razon', 'Razón social', '<input id="e-razon" name="razon_social" required maxlength="100">')}
${field('e-giro', 'Giro', '<input id="e-giro" name="giro" required maxlength="40">')}
${field('e-direccion', 'Dirección', '<input id="e-direccion" name="direccion" required maxlength="70">')}
${field('e-comuna', 'Comuna', '<input id="e-comuna" name="comuna" required maxlength="20">')}
</fieldset>
<fieldset><legend>Detalle</legend>
<table id="tabla-items"><caption>Ítems</caption><thead><tr><th scope="col">Nombre</th><th scope="col">Cantidad</th><th scope="col">Precio unitario</th><th scope="col" class="num">Monto</th><th scope="col"><span class="sr">Quitar</span></th></tr></thead><tbody></tbody></table>
<button type="button" id="btn-item">Agregar ítem</button>
</fieldset>
<section aria-labelledby="t-vista" class="preview"><h2 id="t-vista">Vista previa</h2>
<dl class="grid"><dt>Neto</dt><dd id="v-neto">$0</dd><dt>IVA (19%)</dt><dd id="v-iva">$0</dd><dt>Total</dt><dd id="v-total">$0</dd></dl></section>
<button type="submit">Emitir factura</button>
</form>`,
  },
  {
    path: '/certificados',
    title: 'Certificados',
    nav: 'Certificados',
    body: `
<h1>Certificados de firma</h1>
<table id="tabla-certificados"><caption>Certificados vigentes</caption>
<thead><tr><th scope="col">Etiqueta</th><th scope="col">RUT</th><th scope="col">Vence</th><th scope="col">Predeterminado</th><th scope="col">Acciones</th></tr></thead><tbody></tbody></table>
<section aria-labelledby="t-subir"><h2 id="t-subir">Subir certificado (.p12)</h2>
<form id="form-certificado" novalidate>
${field('c-archivo', 'Archivo .p12 o .pfx', '<input id="c-archivo" name="file" type="file" accept=".p12,.pfx,application/x-pkcs12" required>')}
${field('c-clave', 'Contraseña del certificado', '<input id="c-clave" name="password" type="password" autocomplete="off" required>')}
${field('c-etiqueta', 'Etiqueta', '<input id="c-etiqueta" name="label" required maxlength="100">')}
<button type="submit">Subir certificado</button>
</form></section>`,
  },
  {
    path: '/folios',
    title: 'Folios',
    nav: 'Folios',
    body: `
<h1>Folios (CAF)</h1>
<div id="alertas-folios" role="status"></div>
<table id="tabla-resumen"><caption>Folios disponibles por tipo</caption>
<thead><tr><th scope="col">Emisor</th><th scope="col">Tipo</th><th scope="col" class="num">Disponibles</th><th scope="col">Siguiente folio</th><th scope="col">Alerta</th></tr></thead><tbody></tbody></table>
<section aria-labelledby="t-pedir"><h2 id="t-pedir">Solicitar folios al SII</h2>
<form id="form-folios" novalidate>
${field('p-tipo', 'Tipo de documento', `<select id="p-tipo" name="tipo_dte" required>${TIPOS.replace('<option value="">Todos</option>', '')}</select>`)}
${field('p-cantidad', 'Cantidad', '<input id="p-cantidad" name="cantidad" type="number" min="1" max="10000" value="50" required>')}
<button type="submit">Solicitar folios</button>
</form></section>
<table id="tabla-cafs"><caption>Rangos autorizados</caption>
<thead><tr><th scope="col">Tipo</th><th scope="col">Desde</th><th scope="col">Hasta</th><th scope="col">Estado</th></tr></thead><tbody></tbody></table>`,
  },
  {
    path: '/webhooks',
    title: 'Webhooks',
    nav: 'Webhooks',
    body: `
<h1>Webhooks</h1>
<p>Los webhooks se administran solo con una API key (no con la sesión). Pegue una clave con los permisos <code>webhook:read</code> y <code>webhook:write</code>; se usa solo en esta página y no se guarda.</p>
<form id="form-webhook-key" novalidate>
${field('w-key', 'API key', '<input id="w-key" name="key" type="password" autocomplete="off" required pattern="sk_(cert|prod)_.+">')}
<button type="submit">Ver webhooks</button>
</form>
<table id="tabla-webhooks"><caption>Suscripciones</caption>
<thead><tr><th scope="col">URL</th><th scope="col">Eventos</th><th scope="col">Activo</th><th scope="col">Acciones</th></tr></thead><tbody></tbody></table>
<section aria-labelledby="t-nuevo-wh"><h2 id="t-nuevo-wh">Nueva suscripción</h2>
<form id="form-webhook" novalidate>
${field('w-url', 'URL (https)', '<input id="w-url" name="url" type="url" required placeholder="https://erp.ejemplo.cl/dte">')}
<fieldset><legend>Eventos</legend>
<label><input type="checkbox" name="events" value="dte.emitted" checked> dte.emitted</label>
<label><input type="checkbox" name="events" value="dte.status_changed" checked> dte.status_changed</label>
<label><input type="checkbox" name="events" value="dte.accepted"> dte.accepted</label>
<label><input type="checkbox" name="events" value="dte.rejected"> dte.rejected</label></fieldset>
<button type="submit">Crear suscripción</button>
</form><output id="webhook-secreto"></output></section>`,
  },
  {
    path: '/api-keys',
    title: 'API keys',
    nav: 'API keys',
    body: `
<h1>API keys</h1>
<table id="tabla-keys"><caption>Claves de la organización (solo el prefijo)</caption>
<thead><tr><th scope="col">Nombre</th><th scope="col">Prefijo</th><th scope="col">Ambiente</th><th scope="col">Permisos</th><th scope="col">Último uso</th><th scope="col">Estado</th><th scope="col">Acciones</th></tr></thead><tbody></tbody></table>
<section aria-labelledby="t-nueva-key"><h2 id="t-nueva-key">Nueva API key</h2>
<form id="form-key" novalidate>
${field('k-nombre', 'Nombre', '<input id="k-nombre" name="nombre" required maxlength="100">')}
${field('k-env', 'Ambiente', '<select id="k-env" name="environment"><option value="cert">Certificación</option><option value="prod">Producción</option></select>')}
<fieldset><legend>Permisos</legend>
${['dte:read', 'dte:write', 'certificates:read', 'certificates:write', 'caf:write', 'webhook:read', 'webhook:write'].map((s) => `<label><input type="checkbox" name="scopes" value="${s}" checked> ${s}</label>`).join('\n')}
</fieldset>
<button type="submit">Crear API key</button>
</form>
<div id="key-nueva" role="status"></div></section>`,
  },
  {
    path: '/miembros',
    title: 'Miembros',
    nav: 'Miembros',
    body: `
<h1>Miembros</h1>
<table id="tabla-miembros"><caption>Miembros de la organización</caption>
<thead><tr><th scope="col">Correo</th><th scope="col">Nombre</th><th scope="col">Rol</th><th scope="col">Desde</th></tr></thead><tbody></tbody></table>
<section aria-labelledby="t-solicitudes"><h2 id="t-solicitudes">Solicitudes de acceso pendientes</h2>
<table id="tabla-solicitudes"><caption>Vencen a los 7 días</caption>
<thead><tr><th scope="col">Correo</th><th scope="col">Fecha</th><th scope="col">Vence</th><th scope="col">Decisión</th></tr></thead><tbody></tbody></table></section>`,
  },
  {
    path: '/aprobaciones',
    title: 'Aprobaciones',
    nav: 'Aprobaciones',
    body: `
<h1>Acciones pendientes de aprobación</h1>
<p>Las acciones irreversibles que un agente conectado por MCP pide (reclamar o aceptar una factura recibida ante el SII, anular un documento) no se ejecutan hasta que usted las apruebe aquí. Al aprobar, la acción se ejecuta una sola vez; al rechazar, no se hace nada.</p>
<table id="tabla-aprobaciones"><caption>Acciones pedidas por agentes (más recientes primero)</caption>
<thead><tr><th scope="col">Fecha</th><th scope="col">Acción</th><th scope="col">Herramienta</th><th scope="col">Ambiente</th><th scope="col">Estado</th><th scope="col">Decisión o resultado</th></tr></thead><tbody></tbody></table>`,
  },
  AGENTS_PAGE,
  {
    path: '/auditoria',
    title: 'Auditoría',
    nav: 'Auditoría',
    body: `
<h1>Registro de auditoría</h1>
<table id="tabla-auditoria"><caption>Acciones relevantes para la seguridad (más recientes primero)</caption>
<thead><tr><th scope="col">Fecha</th><th scope="col">Acción</th><th scope="col">Actor</th><th scope="col">Detalle</th><th scope="col">IP</th></tr></thead><tbody></tbody></table>
<button type="button" id="btn-mas-auditoria" hidden>Más antiguos</button>`,
  },
  PLAN_PAGE,
];

const nav = (current: string) =>
  PAGES.filter((p) => p.nav)
    .map(
      (p) =>
        `<li><a href="/dashboard${p.path}"${p.path === current ? ' aria-current="page"' : ''}>${p.nav}</a></li>`,
    )
    .join('');

/** The whole HTML document of a page. */
export function renderPage(page: Page): string {
  const chrome =
    page.path === '/ingresar'
      ? ''
      : `<header class="top"><nav aria-label="Principal"><ul>${nav(page.path)}</ul></nav>
<div class="session"><label for="sii-env">Ambiente</label> <select id="sii-env"><option value="cert">Certificación</option><option value="prod">Producción</option></select>
<span id="usuario"></span> <button type="button" id="btn-salir">Salir</button></div></header>`;
  return `<!doctype html>
<html lang="es-CL">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · Panel DTE</title>
<link rel="stylesheet" href="/dashboard/static/app.css">
<script src="/dashboard/static/app.js" defer></script>
</head>
<body>
<a class="skip" href="#contenido">Ir al contenido</a>
${chrome}
<main id="contenido" data-page="${page.path}" tabindex="-1">
<div id="aviso" role="alert" aria-live="assertive" hidden></div>
${page.body}
</main>
</body>
</html>
`;
}
