/**
 * What the SII's register answered to an acuse or claim (ingresarAceptacionReclamoDoc codResp,
 * WS document v1.2), as the api answers it:
 *
 * - 0 → recorded;
 * - 7 (the same event already recorded) → recorded too: the register holds what was asked, so a
 *   repeated request is idempotent, not an error;
 * - 3 (type not handled) → `recepcion.rar_tipo_no_soportado`;
 * - every other code (8 out of the window, 17 not the receiver, 18 not received, 11/12/13/6/19
 *   incompatible with an earlier event, 1/2/4/10 bad reference) → `recepcion.rar_evento_rechazado`
 *   with `codResp` and the SII's text in the detail.
 */
import { ServiceError } from '@dte/error-catalog';
import { REGISTER_COD_RESP, type RegisterAnswer } from '@dte/sii-client';

export type RegisterOutcome = { recorded: true; repeated: boolean; codResp: number; descResp: string };

export function registerOutcome(a: RegisterAnswer): RegisterOutcome {
  if (a.codResp === 0 || a.codResp === 7)
    return { recorded: true, repeated: a.codResp === 7, codResp: a.codResp, descResp: a.descResp };
  const detail = {
    codResp: a.codResp,
    descResp: a.descResp,
    meaning: REGISTER_COD_RESP[a.codResp] ?? 'unknown answer',
  };
  if (a.codResp === 3)
    throw new ServiceError(
      'recepcion.rar_tipo_no_soportado',
      'The SII register does not handle this document type.',
      {
        detail,
      },
    );
  throw new ServiceError(
    'recepcion.rar_evento_rechazado',
    `The SII register refused the action: ${a.descResp || detail.meaning} (codResp ${a.codResp}).`,
    { detail },
  );
}
