import type { Page } from './page';

/**
 * "Plan y consumo" (issue 32): the organization's plan, this month's documents against the
 * allowance per environment (a bar), the last months (a small chart) and the payments, with a
 * warning from 80 % and at the limit. Filled by static/pages/plan.js from GET /api/v1/billing (owners
 * and admins); the page holds no number of its own.
 */
export const PLAN_PAGE: Page = {
  path: '/plan',
  title: 'Plan y consumo',
  nav: 'Plan y consumo',
  body: `
<h1>Plan y consumo</h1>
<p>Plan <strong id="plan-nombre">—</strong> · Mes en curso: <span id="plan-periodo">—</span></p>
<div id="plan-alertas" aria-live="polite"></div>
<section aria-labelledby="t-consumo"><h2 id="t-consumo">Documentos emitidos este mes</h2>
<div class="consumo" id="consumo-prod" data-env="prod"><h3>Producción</h3><progress max="1" value="0" aria-labelledby="consumo-prod-texto"></progress><p id="consumo-prod-texto">—</p></div>
<div class="consumo" id="consumo-cert" data-env="cert"><h3>Certificación</h3><progress max="1" value="0" aria-labelledby="consumo-cert-texto"></progress><p id="consumo-cert-texto">—</p></div>
</section>
<section aria-labelledby="t-historial"><h2 id="t-historial">Últimos meses</h2>
<figure id="grafico-historial" aria-labelledby="grafico-historial-titulo"><figcaption id="grafico-historial-titulo">Documentos de producción por mes</figcaption></figure>
<table id="tabla-historial"><caption>Documentos emitidos por mes</caption>
<thead><tr><th scope="col">Mes</th><th scope="col">Producción</th><th scope="col">Certificación</th></tr></thead><tbody></tbody></table>
</section>
<section aria-labelledby="t-pagos"><h2 id="t-pagos">Pagos</h2>
<table id="tabla-pagos"><caption>Pagos registrados (más recientes primero)</caption>
<thead><tr><th scope="col">Fecha de pago</th><th scope="col">Mes</th><th scope="col">Monto</th><th scope="col">Referencia</th></tr></thead><tbody></tbody></table>
</section>`,
};
