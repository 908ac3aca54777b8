// The "Agentes" page (its own module): the organization's MCP connections with a "Desconectar"
// button each, and the MCP audit log for owners and admins. Same origin, session cookie; the api
// decides who sees and revokes what. Strings become text nodes, never HTML. Spanish (Chile).
'use strict';

(() => {
  const API = '/api/v1';
  const $ = (sel) => document.querySelector(sel);
  const fecha = (iso) => {
    if (!iso) return '—';
    const d = new Date(iso);
    const f = d.toLocaleDateString('es-CL', {
      day: '2-digit',
      month: '2-digit',
      year: 'numeric',
      timeZone: 'America/Santiago',
    });
    const t = d.toLocaleTimeString('es-CL', {
      hour: '2-digit',
      minute: '2-digit',
      timeZone: 'America/Santiago',
    });
    return `${f.replace(/\//g, '-')} ${t}`;
  };
  const AMBIENTE = { cert: 'Certificación', prod: 'Producción' };
  const RESULTADO = { ok: 'Realizada', error: 'Rechazada', pending: 'Esperando aprobación' };
  const PERMISOS = {
    'dte:read': 'ver documentos',
    'dte:write': 'emitir documentos',
    'rcv:read': 'ver el RCV',
    'empresas:read': 'ver la empresa',
    'certificates:read': 'ver certificados',
    'billing:read': 'ver facturación',
    'recepcion:read': 'ver facturas recibidas',
    'recepcion:write': 'proponer acuse o reclamo',
  };
  const HERRAMIENTAS = {
    emitir_dte: 'Emitir un documento',
    derivar_dte: 'Anular o corregir un documento',
    obtener_dte: 'Ver un documento',
    listar_dtes: 'Listar documentos',
    eventos_dte: 'Ver eventos de un documento',
    refrescar_estado_dte: 'Consultar el estado en el SII',
    totales_dte: 'Ver totales del período',
    listar_certificados: 'Ver certificados',
    obtener_empresa: 'Ver la empresa',
    listar_sucursales: 'Ver sucursales',
    consultar_accion_pendiente: 'Consultar una acción pendiente',
  };

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat())
      if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
    return el;
  }
  function aviso(kind, text) {
    const box = $('#aviso');
    if (!box) return;
    box.className = kind;
    box.textContent = text;
    box.hidden = false;
  }
  async function api(method, path) {
    const res = await fetch(API + path, {
      method,
      headers: { Accept: 'application/json' },
      credentials: 'same-origin',
    });
    const text = await res.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = null;
    }
    if (res.status === 401) location.assign('/dashboard/ingresar');
    return { ok: res.ok, status: res.status, body };
  }
  const fill = (tbody, rows, empty, cols) =>
    tbody.replaceChildren(...(rows.length ? rows : [h('tr', {}, h('td', { colspan: cols }, empty))]));

  async function conexiones() {
    const res = await api('GET', '/mcp-connections');
    if (!res.ok) return aviso('error', (res.body && res.body.message) || `Error ${res.status}`);
    const row = (c) => {
      const estado = h('td', {});
      if (c.revoked_at) estado.append(`Desconectada el ${fecha(c.revoked_at)}`);
      else
        estado.append(
          h(
            'button',
            {
              type: 'button',
              class: 'peligro',
              'data-revocar': c.id,
              'aria-label': `Desconectar ${c.client_name || c.client_id} de ${c.user_email}`,
              onclick: async (e) => {
                if (
                  !confirm(
                    `¿Desconectar «${c.client_name || c.client_id}»? Dejará de tener acceso de inmediato.`,
                  )
                )
                  return;
                e.target.disabled = true;
                const r = await api('DELETE', `/mcp-connections/${c.id}`);
                if (!r.ok) {
                  e.target.disabled = false;
                  return aviso('error', (r.body && r.body.message) || `Error ${r.status}`);
                }
                aviso(
                  'ok',
                  `«${c.client_name || c.client_id}» quedó desconectado; los demás agentes siguen conectados.`,
                );
                conexiones();
              },
            },
            'Desconectar',
          ),
        );
      return h(
        'tr',
        { 'data-conexion': c.id, 'data-estado': c.revoked_at ? 'revocada' : 'activa' },
        h('td', {}, c.client_name || c.client_id),
        h('td', {}, c.user_email),
        h('td', {}, `${c.company_razon_social} (${c.company_rut})`),
        h('td', {}, AMBIENTE[c.sii_env] || c.sii_env),
        h('td', {}, c.scopes.map((s) => PERMISOS[s] || s).join(', ')),
        h('td', {}, fecha(c.created_at)),
        h('td', {}, fecha(c.last_used_at)),
        estado,
      );
    };
    fill($('#tabla-agentes tbody'), res.body.data.map(row), 'No hay agentes conectados.', 8);
  }

  let cursor = null;
  async function auditoria(append) {
    const res = await api('GET', `/mcp-audit-log?limit=50${append && cursor ? `&cursor=${cursor}` : ''}`);
    const section = $('#seccion-mcp-auditoria');
    if (res.status === 403) return (section.hidden = true);
    if (!res.ok) return aviso('error', (res.body && res.body.message) || `Error ${res.status}`);
    const rows = res.body.data.map((a) =>
      h(
        'tr',
        { 'data-llamada': a.id },
        h('td', {}, fecha(a.created_at)),
        h('td', {}, a.client_name || '—'),
        h('td', {}, a.user_email),
        h('td', {}, HERRAMIENTAS[a.tool] || a.tool),
        h('td', {}, `${RESULTADO[a.outcome] || a.outcome}${a.error_code ? ` (${a.error_code})` : ''}`),
      ),
    );
    if (append) $('#tabla-mcp-auditoria tbody').append(...rows);
    else fill($('#tabla-mcp-auditoria tbody'), rows, 'Los agentes aún no han usado herramientas.', 5);
    cursor = res.body.next_cursor;
    const more = $('#btn-mas-mcp-auditoria');
    more.hidden = !cursor;
    more.style.display = cursor ? '' : 'none';
  }

  const start = async () => {
    $('#btn-mas-mcp-auditoria').addEventListener('click', () => auditoria(true));
    await Promise.all([conexiones(), auditoria(false)]);
    document.body.dataset.agentesReady = 'true';
  };
  start();
})();
