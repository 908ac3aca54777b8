import nodemailer from 'nodemailer';
import { consumptionByPlan, readBilling, sendPendingNotices } from '@dte/billing';
import { metrics, onScrape } from '@dte/service-runtime';
import type { ApiDeps, RouteDef } from '../context';
import { principalOf } from './route-kit';

/**
 * GET /billing (issue 32): the organization's plan, this month's use and allowance per
 * environment, the last months and the payments (@dte/billing readBilling, the same reader as the
 * MCP tool consultar_plan and the dashboard's "Plan y consumo"). API keys need billing:read;
 * sessions, an owner or admin (403 forbidden otherwise).
 */
export function billingRoutes(deps: ApiDeps, now: () => Date): RouteDef[] {
  return [
    {
      method: 'get',
      path: '/billing',
      operationId: 'getBilling',
      summary: "The organization's plan, monthly consumption per environment and payments",
      tag: 'billing',
      auth: 'bearer_or_session',
      scope: 'billing:read',
      roles: ['owner', 'admin'],
      responses: { 200: { description: 'plan, consumption and payments', schema: 'billing.schema.json' } },
      errors: [],
      handler: async (ctx) => {
        ctx.body = await readBilling(deps.dataSource, principalOf(ctx).organizationId, now());
      },
    },
  ];
}

/**
 * Sends the pending 80 % / 100 % consumption notices to owners every DELIVERY_INTERVAL_SEC while
 * SMTP is configured (the same mail settings as the receptor deliveries).
 */
export function startBillingNotices(deps: ApiDeps): { stop(): void } {
  const every = deps.config.deliveryIntervalSec;
  if (!deps.config.smtpUrl || every <= 0) return { stop: () => undefined };
  const transport = nodemailer.createTransport(deps.config.smtpUrl);
  const from = deps.config.mailFrom;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sendPendingNotices(deps.dataSource, async (mail) => {
      await transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text });
    })
      .catch((err) => deps.logger.error({ err }, 'billing notices sweep failed'))
      .finally(() => {
        running = false;
      });
  }, every * 1000);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      transport.close();
    },
  };
}

/** dte_billing_documents_month{plan, sii_env}, read from PostgreSQL when Prometheus scrapes. */
export function reportBillingMetrics(
  deps: Pick<ApiDeps, 'dataSource'>,
  now: () => Date = () => new Date(),
): () => void {
  return onScrape(async () => {
    const rows = await consumptionByPlan(deps.dataSource, now());
    metrics.billingDocumentsMonth.reset();
    for (const r of rows) metrics.billingDocumentsMonth.set({ plan: r.plan, sii_env: r.sii_env }, r.used);
  });
}
