// @ts-check
// /plan, "Plan y consumo" (issue 32): the plan, this month's documents against the allowance per
// environment (a bar, a warning from 80 % and at the limit), the last months (a small SVG chart
// and a table) and the payments, from GET /api/v1/billing (owners and admins). The page holds no
// number of its own.
import { api } from '../lib/api.js';
import { el, fill, h } from '../lib/dom.js';
import { describe } from '../lib/errors.js';
import { clp, dia, entero, mes, MESES } from '../lib/format.js';

/** @typedef {{ usedThisMonth: number, limit: number | null }} Uso */
/** @typedef {{ periodo: string, prod: number, cert: number }} Mes */
/** @typedef {{ kind: 'error' | 'advertencia', text: string }} Alerta */

/** @type {Record<'prod' | 'cert', string>} */
const AMBIENTE = { prod: 'producción', cert: 'certificación' };

/**
 * A month in three letters for the chart's axis: "nov 26".
 * @param {string} periodo
 */
function mesCorto(periodo) {
  const [y, m] = periodo.split('-');
  return `${(MESES[Number(m) - 1] ?? m).slice(0, 3)} ${y.slice(2)}`;
}

/**
 * An SVG element (the chart is built with DOM calls: never markup).
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | number>} attrs
 * @param {string} [text]
 * @returns {SVGElementTagNameMap[K]}
 */
function svg(tag, attrs, text) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/**
 * The bar and the sentence of one environment; the alert it calls for, if any.
 * @param {'prod' | 'cert'} env
 * @param {Uso} use
 * @returns {Alerta | null}
 */
function consumo(env, use) {
  const box = el(`#consumo-${env}`, HTMLElement);
  const bar = el('progress', HTMLProgressElement, box);
  const text = el(`#consumo-${env}-texto`, HTMLElement);
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
  if (use.usedThisMonth >= use.limit)
    return {
      kind: 'error',
      text: `Alcanzó el límite mensual de ${AMBIENTE[env]} (${entero(use.limit)} documentos): las nuevas emisiones del mes serán rechazadas hasta que se amplíe el plan.`,
    };
  if (pct >= 80)
    return {
      kind: 'advertencia',
      text: `Ha usado el ${entero(pct)} % de los documentos de ${AMBIENTE[env]} de este mes (${entero(use.usedThisMonth)} de ${entero(use.limit)}).`,
    };
  return null;
}

/**
 * A small bar chart of production documents per month.
 * @param {Mes[]} historial
 */
function grafico(historial) {
  const W = 320;
  const H = 120;
  const max = Math.max(1, ...historial.map((m) => m.prod));
  const step = W / Math.max(historial.length, 1);
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H + 20}`, width: W, height: H + 20, role: 'img' });
  chart.append(svg('title', {}, 'Documentos de producción por mes'));
  historial.forEach((m, i) => {
    const bh = Math.round((m.prod / max) * H);
    const bar = svg('rect', { x: i * step + 6, y: H - bh, width: step - 12, height: bh, class: 'barra' });
    bar.dataset.periodo = m.periodo;
    bar.append(svg('title', {}, `${mes(m.periodo)}: ${entero(m.prod)}`));
    chart.append(
      bar,
      svg(
        'text',
        { x: i * step + step / 2, y: H + 14, 'text-anchor': 'middle', class: 'eje' },
        mesCorto(m.periodo),
      ),
    );
  });
  el('#grafico-historial', HTMLElement).append(chart);
}

/** @type {import('./index.js').PageRun} */
export default async function plan() {
  const alertas = el('#plan-alertas', HTMLElement);
  /** @param {Alerta['kind']} kind @param {string} text @param {string} [env] */
  const alerta = (kind, text, env) =>
    alertas.append(h('p', { class: `aviso ${kind}`, role: 'alert', 'data-env': env }, text));
  try {
    const res = await api('GET', '/billing', { noEnv: true });
    const b = res.body;
    if (!res.ok) {
      alerta(
        'error',
        b && b.code === 'forbidden'
          ? 'Solo los dueños y administradores de la organización ven el plan y el consumo.'
          : describe(res),
      );
      return;
    }
    el('#plan-nombre', HTMLElement).textContent = b.plan;
    el('#plan-periodo', HTMLElement).textContent = mes(b.periodo);
    for (const env of /** @type {const} */ (['prod', 'cert'])) {
      const a = consumo(env, b.environments[env]);
      if (a) alerta(a.kind, a.text, env);
    }
    /** @type {Mes[]} */
    const historial = b.historial;
    grafico(historial);
    fill(
      el('#tabla-historial tbody', HTMLTableSectionElement),
      [...historial]
        .reverse()
        .map((m) =>
          h(
            'tr',
            { 'data-periodo': m.periodo },
            h('td', {}, mes(m.periodo)),
            h('td', {}, entero(m.prod)),
            h('td', {}, entero(m.cert)),
          ),
        ),
      'Sin meses registrados.',
    );
    /** @type {any[]} */
    const payments = b.payments;
    fill(
      el('#tabla-pagos tbody', HTMLTableSectionElement),
      payments.map((p) =>
        h(
          'tr',
          {},
          h('td', {}, dia(p.paid_on)),
          h('td', {}, mes(p.periodo)),
          h('td', {}, clp(p.amount_clp)),
          h('td', {}, p.reference || '—'),
        ),
      ),
      'No hay pagos registrados.',
    );
  } catch (err) {
    alerta('error', `No se pudo cargar el consumo: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    document.body.dataset.planReady = 'true';
  }
}
