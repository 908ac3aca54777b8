// "Plan y consumo" (issue 32): fills the page from GET /api/v1/billing with the session cookie.
// Its own small script (the page module plan-page.ts); Spanish (Chile), es-CL number and date
// formats, Chile's months. No framework, no build step.
'use strict';

(() => {
  const main = document.querySelector('main');
  if (!main || main.dataset.page !== '/plan') return;
  const $ = (sel) => document.querySelector(sel);
  const MESES = [
    'enero',
    'febrero',
    'marzo',
    'abril',
    'mayo',
    'junio',
    'julio',
    'agosto',
    'septiembre',
    'octubre',
    'noviembre',
    'diciembre',
  ];
  const entero = (n) => Number(n).toLocaleString('es-CL');
  const clp = (n) => '$' + Math.round(Number(n) || 0).toLocaleString('es-CL');
  const mes = (periodo) => {
    const [y, m] = periodo.split('-');
    return `${MESES[Number(m) - 1]} de ${y}`;
  };
  const mesCorto = (periodo) => {
    const [y, m] = periodo.split('-');
    return `${MESES[Number(m) - 1].slice(0, 3)} ${y.slice(2)}`;
  };
  /** YYYY-MM-DD → dd-mm-aaaa */
  const fecha = (iso) => iso.split('-').reverse().join('-');
  const AMBIENTE = { prod: 'producción', cert: 'certificación' };

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {}))
      if (v !== undefined && v !== null) e.setAttribute(k, String(v));
    for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
    return e;
  }
  const svg = (tag, attrs) => {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  };

  /** The bar and the sentence of one environment; returns the alert it calls for, if any. */
  function consumo(env, use) {
    const box = $(`#consumo-${env}`);
    const bar = box.querySelector('progress');
    const text = $(`#consumo-${env}-texto`);
    box.dataset.used = String(use.usedThisMonth);
    box.dataset.limit = use.limit === null ? 'unlimited' : String(use.limit);
    if (use.limit === null) {
      bar.max = 1;
      bar.value = 0;
      bar.hidden = true;
      text.textContent = `${entero(use.usedThisMonth)} documentos emitidos (sin límite)`;
      return null;
    }
    bar.hidden = false;
    bar.max = Math.max(use.limit, 1);
    bar.value = Math.min(use.usedThisMonth, bar.max);
    const pct = use.limit === 0 ? 100 : Math.floor((use.usedThisMonth * 100) / use.limit);
    text.textContent = `${entero(use.usedThisMonth)} de ${entero(use.limit)} documentos (${entero(pct)} %)`;
    if (use.usedThisMonth >= use.limit) {
      return {
        kind: 'error',
        env,
        text: `Alcanzó el límite mensual de ${AMBIENTE[env]} (${entero(use.limit)} documentos): las nuevas emisiones del mes serán rechazadas hasta que se amplíe el plan.`,
      };
    }
    if (pct >= 80) {
      return {
        kind: 'advertencia',
        env,
        text: `Ha usado el ${entero(pct)} % de los documentos de ${AMBIENTE[env]} de este mes (${entero(use.usedThisMonth)} de ${entero(use.limit)}).`,
      };
    }
    return null;
  }

  /** A small bar chart of production documents per month (SVG built with DOM calls). */
  function grafico(historial) {
    const fig = $('#grafico-historial');
    const W = 320;
    const H = 120;
    const max = Math.max(1, ...historial.map((h) => h.prod));
    const step = W / historial.length;
    const chart = svg('svg', { viewBox: `0 0 ${W} ${H + 20}`, width: W, height: H + 20, role: 'img' });
    chart.append(Object.assign(svg('title', {}), { textContent: 'Documentos de producción por mes' }));
    historial.forEach((h, i) => {
      const bh = Math.round((h.prod / max) * H);
      const bar = svg('rect', { x: i * step + 6, y: H - bh, width: step - 12, height: bh, class: 'barra' });
      bar.dataset.periodo = h.periodo;
      bar.append(Object.assign(svg('title', {}), { textContent: `${mes(h.periodo)}: ${entero(h.prod)}` }));
      chart.append(bar);
      chart.append(
        Object.assign(
          svg('text', { x: i * step + step / 2, y: H + 14, 'text-anchor': 'middle', class: 'eje' }),
          {
            textContent: mesCorto(h.periodo),
          },
        ),
      );
    });
    fig.append(chart);
  }

  async function load() {
    const res = await fetch('/api/v1/billing', {
      credentials: 'same-origin',
      headers: { Accept: 'application/json' },
    });
    const b = await res.json().catch(() => ({}));
    const alertas = $('#plan-alertas');
    if (!res.ok) {
      const text =
        b.code === 'forbidden'
          ? 'Solo los dueños y administradores de la organización ven el plan y el consumo.'
          : b.message || `Error ${res.status}`;
      alertas.append(el('p', { class: 'aviso error', role: 'alert' }, `${text} [${b.code || res.status}]`));
      return;
    }
    $('#plan-nombre').textContent = b.plan;
    $('#plan-periodo').textContent = mes(b.periodo);
    for (const env of ['prod', 'cert']) {
      const a = consumo(env, b.environments[env]);
      if (a) alertas.append(el('p', { class: `aviso ${a.kind}`, role: 'alert', 'data-env': env }, a.text));
    }
    grafico(b.historial);
    const hist = $('#tabla-historial tbody');
    for (const h of [...b.historial].reverse()) {
      hist.append(
        el(
          'tr',
          { 'data-periodo': h.periodo },
          el('td', {}, mes(h.periodo)),
          el('td', {}, entero(h.prod)),
          el('td', {}, entero(h.cert)),
        ),
      );
    }
    const pagos = $('#tabla-pagos tbody');
    if (b.payments.length === 0)
      pagos.append(el('tr', {}, el('td', { colspan: 4 }, 'No hay pagos registrados.')));
    for (const p of b.payments) {
      pagos.append(
        el(
          'tr',
          {},
          el('td', {}, fecha(p.paid_on)),
          el('td', {}, mes(p.periodo)),
          el('td', {}, clp(p.amount_clp)),
          el('td', {}, p.reference || '—'),
        ),
      );
    }
  }

  load()
    .catch((err) => {
      $('#plan-alertas').append(
        el('p', { class: 'aviso error', role: 'alert' }, `No se pudo cargar el consumo: ${err.message}`),
      );
    })
    .finally(() => {
      document.body.dataset.planReady = 'true';
    });
})();
