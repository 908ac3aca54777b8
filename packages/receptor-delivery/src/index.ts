/**
 * @dte/receptor-delivery: the intercambio e-mail to a document's receptor (EnvioDTE addressed to
 * it, signed, with the printed form), recorded in `dte_deliveries` and retried; the exchange
 * replies to suppliers (`exchange_replies`), with the same leased, retried loop.
 */
export { ReceptorDelivery, ACCEPTED_STATUSES, parseCorreos } from './delivery';
export type { DeliveryDeps, DeliveryOutcome } from './delivery';
export { DEFAULT_DELIVERY_SETTINGS, LeasedSends } from './leased-sends';
export type { AttemptResult, DeliverySettings, LeasedRow, LeasedSendsOptions } from './leased-sends';
export { ExchangeReplyDelivery } from './exchange-replies';
export type { ExchangeReplyDeliveryDeps, ExchangeReplyOutcome } from './exchange-replies';
