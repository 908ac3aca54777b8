// The dashboard's only script: fills the server-rendered pages from the api's JSON routes with
// the session cookie (same origin, so the browser sends Origin on every POST and the api's
// cross-origin check passes only for this page). No framework, no build step. Spanish (Chile).
'use strict';

(() => {
  const API = '/api/v1';
  const main = document.querySelector('main');
  const page = main ? main.dataset.page : '';
  const $ = (sel, root = document) => root.querySelector(sel);
  const env = () => localStorage.getItem('sii_env') || 'cert';
  const clp = (n) => '$' + Math.round(Number(n) || 0).toLocaleString('es-CL');
  const fecha = (iso) =>
    iso ? new Date(iso).toLocaleString('es-CL', { dateStyle: 'short', timeStyle: 'short' }) : '—';

  /** An element with attributes and children (strings become text nodes: never HTML). */
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

  function notice(kind, text) {
    const box = $('#aviso');
    if (!box) return;
    box.className = kind;
    box.textContent = text;
    box.hidden = false;
    box.scrollIntoView({ block: 'nearest' });
  }
  const clearNotice = () => {
    const box = $('#aviso');
    if (box) box.hidden = true;
  };

  const MENSAJES = {
    unauthorized: 'Correo o contraseña incorrectos, o la sesión expiró.',
    rate_limit: 'Demasiados intentos. Espere antes de reintentar.',
    forbidden: 'Su rol no permite esta acción; pida ayuda a un dueño o administrador.',
    'empresa.conflict': 'Esa empresa ya está registrada: solicite acceso a sus dueños.',
    'situacion_tributaria.bloqueada': 'El SII no permite registrar este RUT',
    validation_failed: 'Revise los datos del formulario.',
    csrf_origin_mismatch: 'Solicitud bloqueada por seguridad (origen distinto).',
    csrf_blocked: 'Solicitud bloqueada por seguridad.',
  };

  function describe(res) {
    const b = res.body || {};
    let text = MENSAJES[b.code] || b.message || `Error ${res.status}`;
    if (b.code === 'situacion_tributaria.bloqueada' && b.detail) text += ` (estado: ${b.detail.estado}).`;
    if (b.issues && b.issues.length) text += ' ' + b.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    if (b.code) text += ` [${b.code}]`;
    return text;
  }

  /** One call to the api; 401 sends to the login page, 412 org.required to the organization page. */
  async function api(method, path, opts = {}) {
    const sep = path.includes('?') ? '&' : '?';
    const url = opts.noEnv ? API + path : `${API}${path}${sep}sii_env=${env()}`;
    const headers = Object.assign({ Accept: 'application/json' }, opts.headers || {});
    let body;
    if (opts.json !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(opts.json);
    } else if (opts.form) body = opts.form;
    const res = await fetch(url, { method, headers, body, credentials: 'same-origin' });
    const text = await res.text();
    let parsed = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    const out = { status: res.status, ok: res.ok, body: parsed };
    if (!opts.keepAuthErrors) {
      if (res.status === 401 && page !== '/ingresar') location.assign('/dashboard/ingresar');
      if (res.status === 412 && parsed && parsed.code === 'org.required' && page !== '/organizacion') {
        location.assign('/dashboard/organizacion');
      }
    }
    return out;
  }

  // ── RUT: live check of the modulo-11 check digit ──
  function rutOk(raw) {
    const m = /^0*([0-9]{1,8})-([0-9Kk])$/.exec(String(raw).replace(/\./g, '').trim());
    if (!m) return false;
    let sum = 0;
    let w = 2;
    for (let i = m[1].length - 1; i >= 0; i--) {
      sum += Number(m[1][i]) * w;
      w = w === 7 ? 2 : w + 1;
    }
    const r = 11 - (sum % 11);
    const dv = r === 11 ? '0' : r === 10 ? 'K' : String(r);
    return dv === m[2].toUpperCase();
  }
  function fieldError(input, message) {
    const out = document.getElementById(`${input.id}-error`);
    input.setAttribute('aria-invalid', message ? 'true' : 'false');
    if (out) out.textContent = message || '';
    if (message && out) input.setAttribute('aria-errormessage', out.id);
  }
  function validateInput(input) {
    const v = input.value.trim();
    if (input.required && !v) return (fieldError(input, 'Campo obligatorio.'), false);
    if (input.hasAttribute('data-rut') && v && !rutOk(v))
      return (fieldError(input, 'RUT inválido: revise el dígito verificador.'), false);
    if (input.type === 'email' && v && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v))
      return (fieldError(input, 'Correo inválido.'), false);
    if (input.minLength > 0 && v.length < input.minLength)
      return (fieldError(input, `Al menos ${input.minLength} caracteres.`), false);
    fieldError(input, '');
    return true;
  }
  document.addEventListener('input', (e) => {
    if (e.target.matches('input[data-rut], input[required], input[type=email]')) validateInput(e.target);
  });
  const validForm = (form) =>
    [...form.querySelectorAll('input:not([type=checkbox]):not([type=file])')]
      .map(validateInput)
      .every(Boolean);

  function onSubmit(id, handler) {
    const form = document.getElementById(id);
    if (!form) return;
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearNotice();
      if (!validForm(form)) return notice('error', 'Revise los campos marcados.');
      const button = form.querySelector('button[type=submit]');
      button.disabled = true;
      try {
        await handler(form, new FormData(form));
      } finally {
        button.disabled = false;
      }
    });
  }

  const fill = (tbody, rows, empty) => {
    tbody.replaceChildren(...(rows.length ? rows : [h('tr', {}, h('td', { colspan: 9 }, empty))]));
  };

  // ── common chrome: environment selector, user, logout ──
  async function chrome() {
    const sel = $('#sii-env');
    if (sel) {
      sel.value = env();
      sel.addEventListener('change', () => {
        localStorage.setItem('sii_env', sel.value);
        location.reload();
      });
    }
    const out = $('#btn-salir');
    if (out) {
      out.addEventListener('click', async () => {
        await api('POST', '/auth/logout', { noEnv: true, keepAuthErrors: true });
        location.assign('/dashboard/ingresar');
      });
    }
    if (page === '/ingresar') return null;
    const me = await api('GET', '/auth/me', { noEnv: true });
    if (!me.ok) return null;
    const user = $('#usuario');
    const org = me.body.organizaciones.find((o) => o.organization_id === me.body.organizacion_actual);
    if (user) user.textContent = `${me.body.user.email}${org ? ` · ${org.name} (${org.role})` : ''}`;
    if (!me.body.organizacion_actual && page !== '/organizacion') location.assign('/dashboard/organizacion');
    return me.body;
  }

  // ── pages ──
  const PAGES = {};

  /**
   * `return_to` of the login page (e.g. the OAuth consent step sends the user here and back):
   * only a path on this same origin is honoured, never another site (no open redirect).
   */
  function returnTo() {
    const raw = new URLSearchParams(location.search).get('return_to');
    if (!raw || /[\\\u0000-\u001f]/.test(raw)) return null;
    let u;
    try {
      u = new URL(raw, location.origin);
    } catch {
      return null;
    }
    const sameOrigin =
      raw.startsWith(`${location.origin}/`) || (raw.startsWith('/') && !raw.startsWith('//'));
    if (!sameOrigin || u.origin !== location.origin) return null;
    return u.pathname + u.search + u.hash;
  }

  PAGES['/ingresar'] = () => {
    const back = returnTo();
    const after = (b) =>
      location.assign(back || (b.organizacion_actual ? '/dashboard/documentos' : '/dashboard/organizacion'));
    onSubmit('form-login', async (_f, d) => {
      const res = await api('POST', '/auth/login', {
        noEnv: true,
        keepAuthErrors: true,
        json: { email: d.get('email'), password: d.get('password') },
      });
      if (!res.ok) return notice('error', describe(res));
      after(res.body);
    });
    onSubmit('form-signup', async (_f, d) => {
      const json = { email: d.get('email'), password: d.get('password') };
      if (d.get('nombre')) json.nombre = d.get('nombre');
      const res = await api('POST', '/auth/signup', { noEnv: true, keepAuthErrors: true, json });
      if (!res.ok) return notice('error', describe(res));
      after(res.body);
    });
  };

  PAGES['/organizacion'] = async (me) => {
    if (!me) return;
    const tbody = $('#tabla-organizaciones tbody');
    fill(
      tbody,
      me.organizaciones.map((o) =>
        h(
          'tr',
          {},
          h('td', {}, o.name),
          h('td', {}, o.rut || '—'),
          h('td', {}, o.role),
          h(
            'td',
            {},
            o.organization_id === me.organizacion_actual
              ? 'Actual'
              : h(
                  'button',
                  {
                    type: 'button',
                    class: 'secundario',
                    onclick: async () => {
                      const res = await api('PUT', '/auth/organizacion', {
                        noEnv: true,
                        json: { organization_id: o.organization_id },
                      });
                      if (!res.ok) return notice('error', describe(res));
                      location.assign('/dashboard/documentos');
                    },
                  },
                  'Usar esta',
                ),
          ),
        ),
      ),
      'Aún no pertenece a ninguna organización.',
    );
    if (me.organizacion_actual) {
      const o = await api('GET', '/organizations/me', { noEnv: true });
      if (o.ok) {
        $('#situacion').textContent =
          `${o.body.rut || 'sin RUT'} · situación: ${o.body.situacion_estado || 'sin revisar'}` +
          ` (revisada ${fecha(o.body.situacion_checked_at)}) · producción: ${o.body.prod_enabled ? 'habilitada' : 'no habilitada'}`;
      }
    }
    $('#btn-revalidar').addEventListener('click', async () => {
      const res = await api('POST', '/organizations/me/revalidar-situacion', { noEnv: true });
      if (!res.ok) return notice('error', describe(res));
      notice('ok', `Situación en el SII: ${res.body.estado}.`);
    });
    onSubmit('form-organizacion', async (_f, d) => {
      const json = { rut: String(d.get('rut')).replace(/\./g, '').trim().toUpperCase() };
      for (const k of ['nombre', 'giro', 'direccion', 'comuna', 'resolucion_cert_fecha'])
        if (String(d.get(k) || '').trim()) json[k] = String(d.get(k)).trim();
      for (const k of ['actividad_economica', 'resolucion_cert_numero'])
        if (String(d.get(k) || '').trim()) json[k] = Number(d.get(k));
      // proof of control: the .p12 of a signer the SII authorizes for the RUT (base64), and its password
      const p12 = d.get('certificado');
      if (p12 && p12.size) {
        const bytes = new Uint8Array(await p12.arrayBuffer());
        let bin = '';
        for (const b of bytes) bin += String.fromCharCode(b);
        json.certificado = { p12_base64: btoa(bin), password: String(d.get('certificado_password') || '') };
      }
      const res = await api('POST', '/organizations', { noEnv: true, json });
      if (!res.ok) return notice('error', describe(res));
      location.assign('/dashboard/documentos');
    });
    onSubmit('form-acceso', async (_f, d) => {
      const res = await api('POST', '/organizations/solicitar-acceso', {
        noEnv: true,
        json: { rut: String(d.get('rut')).replace(/\./g, '').trim() },
      });
      if (!res.ok) return notice('error', describe(res));
      notice('ok', `Solicitud enviada a ${res.body.organizacion}; vence el ${fecha(res.body.expires_at)}.`);
    });
  };

  PAGES['/documentos'] = () => {
    const form = $('#form-filtros');
    const tbody = $('#tabla-documentos tbody');
    const more = $('#btn-siguiente');
    let cursor = null;
    async function load(append) {
      const q = new URLSearchParams();
      for (const [k, v] of new FormData(form)) if (String(v).trim()) q.set(k, String(v).trim());
      if (append && cursor) q.set('cursor', cursor);
      const res = await api('GET', `/dtes?${q}`);
      if (!res.ok) return notice('error', describe(res));
      const rows = res.body.data.map((d) =>
        h(
          'tr',
          {},
          h('td', {}, String(d.tipo_dte)),
          h('td', {}, h('a', { href: `/dashboard/documentos/${d.id}` }, String(d.folio))),
          h('td', {}, d.rut_receptor || '—'),
          h('td', {}, d.fecha_emision),
          h('td', { class: 'num' }, clp(d.monto_total)),
          h('td', {}, h('span', { class: 'estado' }, d.sii_status)),
        ),
      );
      if (append) tbody.append(...rows);
      else fill(tbody, rows, 'No hay documentos con esos filtros.');
      cursor = res.body.next_cursor;
      more.hidden = !cursor;
    }
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      clearNotice();
      load(false);
    });
    more.addEventListener('click', () => load(true));
    return load(false);
  };

  PAGES['/documentos/:id'] = () => {
    const id = location.pathname.split('/').pop();
    const xml = $('#doc-xml');
    const pdf = $('#doc-pdf');
    xml.href = `${API}/dtes/${id}/xml?sii_env=${env()}`;
    pdf.href = `${API}/dtes/${id}/pdf?sii_env=${env()}`;
    async function load() {
      const [d, ev] = await Promise.all([api('GET', `/dtes/${id}`), api('GET', `/dtes/${id}/events`)]);
      if (!d.ok) return notice('error', describe(d));
      const doc = d.body;
      $('#doc-titulo').textContent = `Documento tipo ${doc.tipo_dte} N° ${doc.folio}`;
      const estado = doc.estado || {};
      const pairs = [
        [
          'Estado SII',
          h(
            'span',
            { class: `estado ${estado.categoria || ''}`, id: 'doc-estado' },
            `${doc.sii_status} — ${estado.label || ''}`,
          ),
        ],
        ['Detalle', estado.descripcion || doc.sii_glosa || '—'],
        ['Emisor', doc.rut_emisor],
        ['Receptor', `${doc.rut_receptor || '—'} ${doc.razon_social_receptor || ''}`],
        ['Fecha de emisión', doc.fecha_emision],
        ['Neto', clp(doc.monto_neto)],
        ['IVA', clp(doc.iva)],
        ['Total', clp(doc.monto_total)],
        ['Track id', doc.track_id || '—'],
        ['Ambiente', doc.sii_env],
      ];
      $('#doc-datos').replaceChildren(...pairs.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
      const events = ev.ok ? ev.body.data : [];
      $('#doc-eventos').replaceChildren(
        ...(events.length
          ? events.map((e) =>
              h(
                'li',
                {},
                h('strong', {}, e.sii_status),
                ` · ${fecha(e.observed_at)}`,
                e.glosa ? ` · ${e.glosa}` : '',
                ` (${e.source})`,
              ),
            )
          : [h('li', {}, 'Sin eventos aún.')]),
      );
    }
    $('#btn-actualizar').addEventListener('click', () => load());
    return load();
  };

  PAGES['/emitir'] = async () => {
    const tbody = $('#tabla-items tbody');
    const neto = () =>
      [...tbody.querySelectorAll('tr')].reduce((s, tr) => s + Number(tr.dataset.monto || 0), 0);
    function recompute() {
      for (const tr of tbody.querySelectorAll('tr')) {
        const c = Number(tr.querySelector('[name=cantidad]').value) || 0;
        const p = Number(tr.querySelector('[name=precio]').value) || 0;
        tr.dataset.monto = String(Math.round(c * p));
        tr.querySelector('.monto').textContent = clp(tr.dataset.monto);
      }
      const n = neto();
      const iva = Math.round(n * 0.19);
      $('#v-neto').textContent = clp(n);
      $('#v-iva').textContent = clp(iva);
      $('#v-total').textContent = clp(n + iva);
    }
    let seq = 0;
    function addItem() {
      seq += 1;
      const tr = h(
        'tr',
        {},
        h(
          'td',
          {},
          h('label', { class: 'sr', for: `i-nombre-${seq}` }, 'Nombre'),
          h('input', { id: `i-nombre-${seq}`, name: 'nombre', required: true, maxlength: 80 }),
          h('span', { class: 'field-error', id: `i-nombre-${seq}-error` }),
        ),
        h(
          'td',
          {},
          h('label', { class: 'sr', for: `i-cant-${seq}` }, 'Cantidad'),
          h('input', {
            id: `i-cant-${seq}`,
            name: 'cantidad',
            type: 'number',
            min: '1',
            step: 'any',
            value: '1',
            required: true,
          }),
        ),
        h(
          'td',
          {},
          h('label', { class: 'sr', for: `i-precio-${seq}` }, 'Precio unitario'),
          h('input', {
            id: `i-precio-${seq}`,
            name: 'precio',
            type: 'number',
            min: '0',
            step: '1',
            required: true,
          }),
        ),
        h('td', { class: 'num monto' }, '$0'),
        h(
          'td',
          {},
          h(
            'button',
            {
              type: 'button',
              class: 'peligro',
              onclick: () => {
                tr.remove();
                recompute();
              },
            },
            'Quitar',
          ),
        ),
      );
      tbody.append(tr);
      recompute();
    }
    tbody.addEventListener('input', recompute);
    $('#btn-item').addEventListener('click', addItem);
    addItem();
    const me = await api('GET', '/organizations/me', { noEnv: true });
    const contrapartes = await api('GET', '/contrapartes');
    const known = new Map();
    if (contrapartes.ok) {
      for (const c of contrapartes.body.data) {
        known.set(c.rut, c);
        $('#lista-contrapartes').append(h('option', { value: c.rut }, c.razon_social));
      }
    }
    $('#e-rut').addEventListener('change', (e) => {
      const c = known.get(e.target.value.trim().toUpperCase());
      if (!c) return;
      for (const [k, sel] of [
        ['razon_social', '#e-razon'],
        ['giro', '#e-giro'],
        ['direccion', '#e-direccion'],
        ['comuna', '#e-comuna'],
      ]) {
        if (c[k] && !$(sel).value) $(sel).value = c[k];
      }
    });
    onSubmit('form-emitir', async (_f, d) => {
      if (!me.ok || !me.body.empresas.length) return notice('error', 'La organización no tiene empresa.');
      const items = [...tbody.querySelectorAll('tr')].map((tr) => ({
        nombre: tr.querySelector('[name=nombre]').value.trim(),
        cantidad: Number(tr.querySelector('[name=cantidad]').value),
        precio_unitario: Number(tr.querySelector('[name=precio]').value),
        exento: false,
        monto_item: Number(tr.dataset.monto),
      }));
      if (!items.length) return notice('error', 'Agregue al menos un ítem.');
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/Santiago' }).format(new Date());
      const json = {
        tipo_dte: 33,
        rut_emisor: me.body.empresas[0].rut,
        fecha_emision: today,
        forma_pago: 1,
        receptor: {
          rut: String(d.get('rut')).replace(/\./g, '').trim().toUpperCase(),
          razon_social: String(d.get('razon_social')).trim(),
          giro: String(d.get('giro')).trim(),
          direccion: String(d.get('direccion')).trim(),
          comuna: String(d.get('comuna')).trim(),
        },
        items,
      };
      const res = await api('POST', '/dtes', { json, headers: { 'Idempotency-Key': crypto.randomUUID() } });
      if (!res.ok) return notice('error', describe(res));
      location.assign(`/dashboard/documentos/${res.body.id}`);
    });
  };

  PAGES['/certificados'] = () => {
    const tbody = $('#tabla-certificados tbody');
    async function load() {
      const res = await api('GET', '/certificates');
      if (!res.ok) return notice('error', describe(res));
      fill(
        tbody,
        res.body.data.map((c) =>
          h(
            'tr',
            {},
            h('td', {}, c.label),
            h('td', {}, c.rut),
            h('td', {}, fecha(c.not_after)),
            h('td', {}, c.is_default ? 'Sí' : 'No'),
            h(
              'td',
              { class: 'actions' },
              c.is_default
                ? null
                : h(
                    'button',
                    {
                      type: 'button',
                      class: 'secundario',
                      onclick: () => act('POST', `/certificates/${c.id}/activate`, 'Certificado activado.'),
                    },
                    'Activar',
                  ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'peligro',
                  onclick: () =>
                    confirm('¿Eliminar este certificado?') &&
                    act('DELETE', `/certificates/${c.id}`, 'Certificado eliminado.'),
                },
                'Eliminar',
              ),
            ),
          ),
        ),
        'No hay certificados cargados.',
      );
    }
    async function act(method, path, ok) {
      const res = await api(method, path);
      if (!res.ok) return notice('error', describe(res));
      notice('ok', ok);
      load();
    }
    onSubmit('form-certificado', async (form, d) => {
      if (!d.get('file') || !d.get('file').size) return notice('error', 'Elija el archivo .p12.');
      const res = await api('POST', '/certificates', { form: d });
      if (!res.ok) return notice('error', describe(res));
      form.reset();
      notice('ok', `Certificado «${res.body.label}» cargado (RUT ${res.body.rut}).`);
      load();
    });
    return load();
  };

  PAGES['/folios'] = () => {
    async function load() {
      const res = await api('GET', '/caf');
      if (!res.ok) return notice('error', describe(res));
      const low = res.body.summary.filter((s) => s.alerts.includes('low_folios'));
      $('#alertas-folios').replaceChildren(
        ...low.map((s) =>
          h(
            'p',
            { class: 'alerta' },
            `Quedan pocos folios del tipo ${s.tipo_dte} (${s.remaining}; umbral ${s.low_folios_threshold}). Solicite más.`,
          ),
        ),
      );
      fill(
        $('#tabla-resumen tbody'),
        res.body.summary.map((s) =>
          h(
            'tr',
            {},
            h('td', {}, s.rut_emisor),
            h('td', {}, String(s.tipo_dte)),
            h('td', { class: 'num' }, String(s.remaining)),
            h('td', {}, s.next_folio === null ? '—' : String(s.next_folio)),
            h('td', {}, s.alerts.includes('low_folios') ? 'Pocos folios' : '—'),
          ),
        ),
        'Sin folios: solicítelos al SII.',
      );
      fill(
        $('#tabla-cafs tbody'),
        res.body.data.map((c) =>
          h(
            'tr',
            {},
            h('td', {}, String(c.tipo_dte)),
            h('td', {}, String(c.desde)),
            h('td', {}, String(c.hasta)),
            h('td', {}, c.expired ? 'Vencido' : c.exhausted ? 'Agotado' : `${c.remaining} disponibles`),
          ),
        ),
        'Sin rangos.',
      );
    }
    onSubmit('form-folios', async (_f, d) => {
      const res = await api('POST', '/caf/request', {
        json: { tipo_dte: Number(d.get('tipo_dte')), cantidad: Number(d.get('cantidad')) },
      });
      if (!res.ok) return notice('error', describe(res));
      notice('ok', `Folios autorizados por el SII: ${res.body.desde}–${res.body.hasta}.`);
      load();
    });
    return load();
  };

  PAGES['/webhooks'] = () => {
    let key = '';
    const call = async (method, path, json, extra) => {
      const headers = Object.assign(
        { Authorization: `Bearer ${key}`, Accept: 'application/json' },
        extra || {},
      );
      if (json) headers['Content-Type'] = 'application/json';
      const res = await fetch(API + path, {
        method,
        headers,
        body: json ? JSON.stringify(json) : undefined,
        credentials: 'omit',
      });
      const text = await res.text();
      return { status: res.status, ok: res.ok, body: text ? JSON.parse(text) : null };
    };
    async function load() {
      const res = await call('GET', '/webhooks');
      if (!res.ok) return notice('error', describe(res));
      fill(
        $('#tabla-webhooks tbody'),
        res.body.webhooks.map((w) =>
          h(
            'tr',
            {},
            h('td', {}, w.url),
            h('td', {}, w.events.join(', ')),
            h('td', {}, w.active ? 'Sí' : `No (${w.disabled_reason || ''})`),
            h(
              'td',
              { class: 'actions' },
              h(
                'button',
                {
                  type: 'button',
                  class: 'secundario',
                  onclick: async () => {
                    const r = await call('POST', `/webhooks/${w.id}/test`);
                    notice(r.ok ? 'ok' : 'error', r.ok ? 'Evento de prueba encolado.' : describe(r));
                  },
                },
                'Probar',
              ),
              h(
                'button',
                {
                  type: 'button',
                  class: 'peligro',
                  onclick: async () => {
                    const r = await call('DELETE', `/webhooks/${w.id}`);
                    if (!r.ok) return notice('error', describe(r));
                    load();
                  },
                },
                'Eliminar',
              ),
            ),
          ),
        ),
        'Sin suscripciones.',
      );
    }
    onSubmit('form-webhook-key', async (_f, d) => {
      key = String(d.get('key')).trim();
      load();
    });
    onSubmit('form-webhook', async (_f, d) => {
      if (!key) return notice('error', 'Primero ingrese una API key.');
      const res = await call(
        'POST',
        '/webhooks',
        { url: d.get('url'), events: d.getAll('events') },
        { 'Idempotency-Key': crypto.randomUUID() },
      );
      if (!res.ok) return notice('error', describe(res));
      $('#webhook-secreto').replaceChildren(
        h('p', {}, 'Secreto de firma (se muestra solo esta vez):'),
        h('code', { class: 'secreto' }, res.body.secret),
      );
      load();
    });
  };

  PAGES['/api-keys'] = () => {
    const shown = (label, b) => {
      $('#key-nueva').replaceChildren(
        h('p', {}, `${label} Cópiela ahora: no se volverá a mostrar.`),
        h('code', { class: 'secreto', id: 'key-valor' }, b.key),
      );
    };
    async function load() {
      const res = await api('GET', '/api-keys', { noEnv: true });
      if (!res.ok) return notice('error', describe(res));
      fill(
        $('#tabla-keys tbody'),
        res.body.data.map((k) =>
          h(
            'tr',
            {},
            h('td', {}, k.nombre),
            h('td', {}, h('code', {}, k.prefix + '…')),
            h('td', {}, k.environment),
            h('td', {}, k.scopes.join(', ')),
            h('td', {}, fecha(k.last_used_at)),
            h('td', {}, k.revoked_at ? `Revocada ${fecha(k.revoked_at)}` : 'Activa'),
            h(
              'td',
              { class: 'actions' },
              k.revoked_at
                ? null
                : [
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'secundario',
                        onclick: async () => {
                          const r = await api('POST', `/api-keys/${k.id}/rotate`, { noEnv: true });
                          if (!r.ok) return notice('error', describe(r));
                          shown('Clave rotada; la anterior quedó revocada.', r.body);
                          load();
                        },
                      },
                      'Rotar',
                    ),
                    h(
                      'button',
                      {
                        type: 'button',
                        class: 'peligro',
                        onclick: async () => {
                          const r = await api('POST', `/api-keys/${k.id}/revoke`, { noEnv: true });
                          if (!r.ok) return notice('error', describe(r));
                          notice('ok', 'Clave revocada.');
                          load();
                        },
                      },
                      'Revocar',
                    ),
                  ],
            ),
          ),
        ),
        'No hay API keys.',
      );
    }
    onSubmit('form-key', async (_f, d) => {
      const res = await api('POST', '/api-keys', {
        noEnv: true,
        json: { nombre: d.get('nombre'), environment: d.get('environment'), scopes: d.getAll('scopes') },
      });
      if (!res.ok) return notice('error', describe(res));
      shown('Clave creada.', res.body);
      load();
    });
    return load();
  };

  PAGES['/miembros'] = async (me) => {
    const res = await api('GET', '/organizations/me/miembros', { noEnv: true });
    if (!res.ok) return notice('error', describe(res));
    const mine = me && me.organizaciones.find((o) => o.organization_id === me.organizacion_actual);
    const isOwner = !!mine && mine.role === 'owner';
    const change = async (m, rol) => {
      const r = rol
        ? await api('PUT', `/organizations/me/miembros/${m.user_id}`, { noEnv: true, json: { rol } })
        : await api('DELETE', `/organizations/me/miembros/${m.user_id}`, { noEnv: true });
      if (!r.ok) return notice('error', describe(r));
      notice('ok', rol ? `Rol de ${m.email}: ${rol}.` : `${m.email} ya no es miembro.`);
      PAGES['/miembros'](me);
    };
    const roleCell = (m) => {
      if (!isOwner || m.user_id === me.user.id) return m.role;
      const sel = h(
        'select',
        { 'aria-label': `Rol de ${m.email}`, onchange: (e) => change(m, e.target.value) },
        ...['owner', 'admin', 'member'].map((r) => h('option', { value: r, selected: r === m.role }, r)),
      );
      const quitar = h(
        'button',
        {
          type: 'button',
          class: 'peligro',
          onclick: () => confirm(`¿Quitar a ${m.email}?`) && change(m, null),
        },
        'Quitar',
      );
      return h('span', { class: 'actions' }, sel, quitar);
    };
    fill(
      $('#tabla-miembros tbody'),
      res.body.data.map((m) =>
        h(
          'tr',
          {},
          h('td', {}, m.email),
          h('td', {}, m.name || '—'),
          h('td', {}, roleCell(m)),
          h('td', {}, fecha(m.since)),
        ),
      ),
      'Sin miembros.',
    );
    if (!mine || mine.role !== 'owner') {
      fill($('#tabla-solicitudes tbody'), [], 'Solo los dueños ven y deciden las solicitudes.');
      return;
    }
    const load = async () => {
      const r = await api('GET', '/organizations/me/solicitudes-acceso', { noEnv: true });
      if (!r.ok) return notice('error', describe(r));
      const decide = async (token, decision) => {
        const x = await api('POST', '/organizations/solicitudes-acceso/decidir', {
          noEnv: true,
          json: { token, decision },
        });
        if (!x.ok) return notice('error', describe(x));
        notice('ok', `Solicitud ${x.body.estado}.`);
        load();
      };
      fill(
        $('#tabla-solicitudes tbody'),
        r.body.data.map((s) =>
          h(
            'tr',
            {},
            h('td', {}, s.requester_email),
            h('td', {}, fecha(s.created_at)),
            h('td', {}, fecha(s.expires_at)),
            h(
              'td',
              { class: 'actions' },
              h('button', { type: 'button', onclick: () => decide(s.token, 'aprobar') }, 'Aprobar'),
              h(
                'button',
                { type: 'button', class: 'peligro', onclick: () => decide(s.token, 'rechazar') },
                'Rechazar',
              ),
            ),
          ),
        ),
        'No hay solicitudes pendientes.',
      );
    };
    return load();
  };

  PAGES['/auditoria'] = () => {
    let cursor = null;
    const more = $('#btn-mas-auditoria');
    async function load(append) {
      const res = await api('GET', `/audit-log?limit=50${append && cursor ? `&cursor=${cursor}` : ''}`, {
        noEnv: true,
      });
      if (!res.ok) return notice('error', describe(res));
      const rows = res.body.data.map((a) =>
        h(
          'tr',
          {},
          h('td', {}, fecha(a.at)),
          h('td', {}, a.action),
          h('td', {}, a.actor),
          h('td', {}, h('code', {}, JSON.stringify(a.detail))),
          h('td', {}, a.ip || '—'),
        ),
      );
      if (append) $('#tabla-auditoria tbody').append(...rows);
      else fill($('#tabla-auditoria tbody'), rows, 'Sin registros.');
      cursor = res.body.next_cursor;
      more.hidden = !cursor;
    }
    more.addEventListener('click', () => load(true));
    return load(false);
  };

  // ── pending actions of MCP agents (approve / reject) ──
  const ESTADOS_ACCION = {
    pending: 'Pendiente',
    approved: 'Aprobada y ejecutada',
    rejected: 'Rechazada',
    failed: 'Aprobada; el SII o el servicio la rechazó',
  };
  /** What came out of an approved action, in one line. */
  function resultado(a) {
    if (a.status === 'pending') return null;
    if (a.status === 'rejected') return 'No se hizo nada.';
    const r = a.result || {};
    if (a.status === 'failed') return `${r.message || 'Error'}${r.code ? ` [${r.code}]` : ''}`;
    if (r.sii_estado) {
      const ev = r.reclamo || r.acuse;
      return `Registrada en el SII${ev ? ` (${ev})` : ''}; estado en el registro: ${r.sii_estado}.`;
    }
    if (r.tipo_dte)
      return `Documento tipo ${r.tipo_dte} folio ${r.folio ?? '—'} (${r.sii_status || 'en proceso'}).`;
    return 'Ejecutada.';
  }
  PAGES['/aprobaciones'] = () => {
    const tbody = $('#tabla-aprobaciones tbody');
    const decide = async (a, decision, cell) => {
      cell.querySelectorAll('button').forEach((b) => (b.disabled = true));
      const res = await api('POST', `/pending-actions/${a.id}/${decision}`, { noEnv: true });
      if (!res.ok) {
        cell.querySelectorAll('button').forEach((b) => (b.disabled = false));
        return notice('error', describe(res));
      }
      const done = res.body.pending_action;
      notice(done.status === 'failed' ? 'error' : 'ok', `${ESTADOS_ACCION[done.status]}: ${done.summary}`);
      return load();
    };
    const row = (a) => {
      const decision = h('td', { class: 'decision' });
      if (a.status === 'pending') {
        decision.append(
          h(
            'span',
            { class: 'actions' },
            h(
              'button',
              {
                type: 'button',
                'data-approve': a.id,
                'aria-label': `Aprobar: ${a.summary}`,
                onclick: () => decide(a, 'approve', decision),
              },
              'Aprobar',
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'peligro',
                'data-reject': a.id,
                'aria-label': `Rechazar: ${a.summary}`,
                onclick: () => decide(a, 'reject', decision),
              },
              'Rechazar',
            ),
          ),
        );
      } else decision.append(`${resultado(a)}${a.decided_at ? ` (${fecha(a.decided_at)})` : ''}`);
      return h(
        'tr',
        { 'data-accion': a.id, 'data-estado': a.status },
        h('td', {}, fecha(a.created_at)),
        h('td', {}, a.summary),
        h('td', {}, h('code', {}, a.tool)),
        h('td', {}, a.sii_env === 'prod' ? 'Producción' : 'Certificación'),
        h('td', {}, h('span', { class: `estado ${a.status}` }, ESTADOS_ACCION[a.status] || a.status)),
        decision,
      );
    };
    async function load() {
      const res = await api('GET', '/pending-actions', { noEnv: true });
      if (!res.ok) return notice('error', describe(res));
      fill(tbody, res.body.pending_actions.map(row), 'No hay acciones pedidas por agentes.');
    }
    return load();
  };

  const start = async () => {
    const me = await chrome();
    const run = PAGES[page];
    if (run) await run(me);
    document.body.dataset.ready = 'true';
  };
  start();
})();
