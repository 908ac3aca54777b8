import {
  classify,
  isDeprecatedStatus,
  KNOWN_STATUSES,
  SII_STATUS_VOCABULARY,
  statusInWords,
} from '@dte/status';

/**
 * The dashboard's pages: server-rendered HTML shells (navigation, headings, forms, empty tables
 * with captions) in Spanish (Chile). The data comes from the api's JSON routes, fetched by the
 * page's module (static/pages/, registered in static/pages/index.js) with the session cookie; no
 * page embeds user data, so nothing here needs escaping beyond the fixed strings.
 *
 * A new page: one entry here (its path, title, navigation label and shell) and one module in
 * static/pages/ registered under the same path.
 */
import { AGENTS_PAGE } from './agents-page';
import type { Page } from './page';
import { SCOPE_WORDS, SCOPES } from '@dte/tenancy';
import { PLAN_PAGE } from './plan-page';

const field = (id: string, label: string, input: string, help = '') =>
  `<div class="field"><label for="${id}">${label}</label>${input}${help ? `<small id="${id}-ayuda">${help}</small>` : ''}<span class="field-error" id="${id}-error" aria-live="polite"></span></div>`;

const TIPOS = `<option value="">Todos</option><option value="33">33 Factura electrónica</option><option value="34">34 Factura exenta</option><option value="46">46 Factura de compra</option><option value="52">52 Guía de despacho</option><option value="56">56 Nota de débito</option><option value="61">61 Nota de crédito</option><option value="110">110 Factura de exportación</option><option value="112">112 NC de exportación</option>`;

/**
 * The words of every status (the one table of @dte/status), embedded in each page for
 * static/lib/estados.js: {code: {texto, categoria}}. `<` is escaped so nothing closes the tag.
 */
export const ESTADOS_JSON = JSON.stringify(
  Object.fromEntries(
    KNOWN_STATUSES.map((code) => {
      return [code, { texto: statusInWords(code), categoria: classify(code).categoria }];
    }),
  ),
).replace(/</g, '\\u003c');

/** The scopes and their words (@dte/tenancy), embedded as JSON for static/lib/permisos.js. */
const PERMISOS_JSON = JSON.stringify({ apiKey: SCOPES, palabras: SCOPE_WORDS }).replace(/</g, '\\u003c');

/** The filter's choices: the documented vocabulary (deprecated members left out) in words. */
const ESTADOS_OPCIONES = [
  '<option value="">Todos</option>',
  ...SII_STATUS_VOCABULARY.filter((code) => !isDeprecatedStatus(code)).map(
    (code) => `<option value="${code}">${statusInWords(code)}</option>`,
  ),
].join('');

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
<p>Se verifica la situación tributaria del RUT en el SII y que usted actúa por la empresa (con su certificado digital). Usted quedará como dueño de la organización.</p>
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
${field('org-resol-fecha', 'Fecha de la resolución', '<input id="org-resol-fecha" name="resolucion_cert_fecha" data-fecha placeholder="dd-mm-aaaa" inputmode="numeric" maxlength="10">')}
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
${field('f-rut', 'RUT del cliente', '<input id="f-rut" name="rut_receptor" data-rut>')}
${field('f-desde', 'Emitidos desde', '<input id="f-desde" name="fecha_emision_desde" data-fecha placeholder="dd-mm-aaaa" inputmode="numeric" maxlength="10">')}
${field('f-hasta', 'Hasta', '<input id="f-hasta" name="fecha_emision_hasta" data-fecha placeholder="dd-mm-aaaa" inputmode="numeric" maxlength="10">')}
${field('f-estado', 'Estado en el SII', `<select id="f-estado" name="sii_status">${ESTADOS_OPCIONES}</select>`)}
<div class="field"><button type="submit">Filtrar</button></div>
</form>
<table id="tabla-documentos"><caption>Documentos (más recientes primero)</caption>
<thead><tr><th scope="col">Tipo</th><th scope="col" class="num">Folio</th><th scope="col">Cliente</th><th scope="col">Fecha de emisión</th><th scope="col" class="num">Total</th><th scope="col">Estado en el SII</th></tr></thead><tbody></tbody></table>
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
${field('c-archivo', 'Archivo .p12 o .pfx', '<div class="archivo"><input id="c-archivo" name="file" type="file" accept=".p12,.pfx,application/x-pkcs12" required><span class="button secundario" aria-hidden="true">Elegir archivo…</span> <span id="c-archivo-nombre" aria-hidden="true">Ningún archivo elegido</span></div>')}
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
<div class="ayuda">
<p>Un webhook avisa a su sistema (ERP, contabilidad) cada vez que un documento se emite o cambia de estado en el SII, con una llamada HTTPS firmada a la dirección que usted indique.</p>
<p>Por seguridad, los webhooks se administran solo con una <strong>API key</strong> (la clave que usa su sistema), nunca con la sesión de este panel: así cada suscripción queda ligada a la clave y al ambiente (certificación o producción) de quien la recibe.</p>
</div>
<ol class="pasos">
<li><h2 id="t-clave-wh">Paso 1: la API key de webhooks</h2>
<p>Cree en un paso una API key con los permisos <em>ver webhooks</em> y <em>administrar webhooks</em> (webhook:read, webhook:write) para el ambiente elegido arriba, o pegue una que ya tenga. La clave se usa solo mientras esta página esté abierta; puede revocarla en «API keys».</p>
<p class="actions"><button type="button" id="btn-webhook-crear-clave">Crear API key de webhooks</button></p>
<form id="form-webhook-key" novalidate aria-labelledby="t-clave-wh">
${field('w-key', 'O pegue una API key existente', '<input id="w-key" name="key" type="password" autocomplete="off" required pattern="sk_(cert|prod)_.+">')}
<button type="submit" class="secundario">Usar esta clave</button>
</form>
<p id="webhook-clave-estado" role="status"></p></li>
<li><h2 id="t-lista-wh">Paso 2: sus suscripciones</h2>
<table id="tabla-webhooks"><caption>Suscripciones de la API key</caption>
<thead><tr><th scope="col">Dirección (URL)</th><th scope="col">Eventos</th><th scope="col">Activa</th><th scope="col">Acciones</th></tr></thead><tbody><tr><td colspan="4" class="vacio">Cree o ingrese una API key para ver las suscripciones.</td></tr></tbody></table></li>
<li><section aria-labelledby="t-nuevo-wh"><h2 id="t-nuevo-wh">Paso 3: nueva suscripción</h2>
<form id="form-webhook" novalidate>
${field('w-url', 'Dirección que recibe los avisos (https)', '<input id="w-url" name="url" type="url" required placeholder="https://erp.ejemplo.cl/dte">')}
<fieldset><legend>Avisar cuando</legend>
<label><input type="checkbox" name="events" value="dte.emitted" checked> Se emite un documento (dte.emitted)</label>
<label><input type="checkbox" name="events" value="dte.status_changed" checked> Cambia su estado en el SII (dte.status_changed)</label>
<label><input type="checkbox" name="events" value="dte.accepted"> El SII lo acepta (dte.accepted)</label>
<label><input type="checkbox" name="events" value="dte.rejected"> El SII lo rechaza (dte.rejected)</label></fieldset>
<button type="submit">Crear suscripción</button>
</form><output id="webhook-secreto"></output></section></li></ol>`,
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
<fieldset id="k-permisos"><legend>Permisos</legend>
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
<p>Las acciones irreversibles que un agente conectado por MCP pide (emitir una nota de crédito o de débito; cualquier emisión o derivación que pida omitir una regla, como emitir sobre una factura cedida o anular fuera de plazo; derivar un documento en otro, salvo una copia; registrar ante el SII el acuse o el reclamo de una factura recibida) no se ejecutan hasta que usted las apruebe aquí. Al aprobar, la acción se ejecuta una sola vez; al rechazar, no se hace nada.</p>
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
<thead><tr><th scope="col">Fecha</th><th scope="col">Quién</th><th scope="col">Qué hizo</th><th scope="col">Sobre qué</th><th scope="col">IP</th></tr></thead><tbody></tbody></table>
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
<link rel="icon" href="/dashboard/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/static/app.css">
<script type="application/json" id="estados-sii">${ESTADOS_JSON}</script>
<script type="application/json" id="permisos">${PERMISOS_JSON}</script>
<script type="module" src="/dashboard/static/app.js"></script>
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
