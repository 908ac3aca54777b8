/**
 * Cessions (factoring) of seeded purchases, admin API: the SII's register of electronic
 * transfers (RPETC) is not a web service of the sources, so the simulator keeps the minimum the
 * receiver's RCV shows about it:
 *
 *   POST /admin/{env}/purchases/{rutEmisor}/{tipoDte}/{folio}/cesion
 *        {rutCesionario, razonSocialCesionario?, fechaCesion (YYYY-MM-DD)}  → 201 the purchase
 *
 * The compras rows of the RCV then carry `cesion: {rutCesionario, razonSocialCesionario,
 * fechaCesion}`; a purchase without one carries `cesion: null` (the SII knows of no transfer).
 */
import type Router from '@koa/router';
import { jsonError, readJson } from '../http';
import { normalizeRut } from '../rut';
import type { Sim } from '../sim';

export function purchaseCessionRoutes(sim: Sim, router: Router): void {
  router.post('/admin/:env/purchases/:rutEmisor/:tipo/:folio/cesion', async (ctx) => {
    const env = ctx.params.env;
    if (env !== 'cert' && env !== 'prod') return jsonError(ctx, 404, 'env_desconocido', 'cert or prod');
    const emisor = normalizeRut(ctx.params.rutEmisor ?? '');
    const p = sim.state.env[env].purchases.find(
      (x) =>
        x.rutEmisor === emisor &&
        x.tipoDte === Number(ctx.params.tipo) &&
        x.folio === Number(ctx.params.folio),
    );
    if (!p)
      return jsonError(ctx, 404, 'compra_desconocida', 'no seeded purchase with that issuer, type and folio');
    let b: Record<string, unknown>;
    try {
      b = (await readJson(ctx)) as Record<string, unknown>;
    } catch {
      return jsonError(ctx, 422, 'json_invalido', 'body must be a JSON object');
    }
    const cesionario = normalizeRut(String(b?.rutCesionario ?? ''));
    const fecha = String(b?.fechaCesion ?? '');
    if (!cesionario || !/^\d{4}-\d{2}-\d{2}$/.test(fecha))
      return jsonError(ctx, 422, 'cesion_invalida', 'needs rutCesionario and fechaCesion (YYYY-MM-DD)');
    p.cesion = {
      rutCesionario: cesionario,
      razonSocialCesionario: b.razonSocialCesionario === undefined ? '' : String(b.razonSocialCesionario),
      fechaCesion: fecha,
    };
    ctx.status = 201;
    ctx.body = p;
  });
}
