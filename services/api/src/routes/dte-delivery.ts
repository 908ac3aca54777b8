import type { ApiDeps, Principal, RouteDef } from '../context';
import { type DteScope, receptorDelivery, resendBodyOf, resendDelivery } from '@dte/emission';
import { parseJsonBody } from '../http/json-body';
import { principalOf } from './route-kit';

const scopeOf = (p: Principal): DteScope => ({
  organizationId: p.organizationId,
  environment: p.environment,
  companyId: p.companyId,
});

/** POST /dtes/:id/resend-delivery (issue 11): the intercambio mail to the receptor, again. */
export function dteDeliveryRoutes(deps: ApiDeps): RouteDef[] {
  const sender = receptorDelivery(deps);
  return [
    {
      method: 'post',
      path: '/dtes/:id/resend-delivery',
      operationId: 'resendDteDelivery',
      summary:
        'Send the document to the receptor again: EnvioDTE addressed to it, signed, with the PDF (optional JSON body {correo_receptor}, see dte-resend-delivery-body.schema.json)',
      tag: 'dtes',
      auth: 'bearer',
      scope: 'dte:write',
      responses: {
        200: { description: 'sent', schema: 'dte-resend-delivery.schema.json' },
        202: {
          description: 'the attempt failed; pending for retries',
          schema: 'dte-resend-delivery.schema.json',
        },
      },
      errors: [
        'not_found',
        'validation_error',
        'dte.resend_delivery.not_wired',
        'dte.resend_delivery.tipo_not_supported',
        'dte.resend_delivery.no_email',
        'dte.resend_delivery.no_aplica_cert',
        'dte.pdf.not_signed',
      ],
      handler: async (ctx) => {
        const body = resendBodyOf(await parseJsonBody(ctx));
        const out = await resendDelivery(
          deps,
          sender,
          scopeOf(principalOf(ctx)),
          String(ctx.params.id),
          body,
        );
        ctx.status = out.status;
        ctx.body = out.body;
      },
    },
  ];
}
