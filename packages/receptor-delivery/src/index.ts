/**
 * @dte/receptor-delivery: the intercambio e-mail to a document's receptor (EnvioDTE addressed to
 * it, signed, with the printed form), recorded in `dte_deliveries` and retried.
 */
export { ReceptorDelivery, ACCEPTED_STATUSES, DEFAULT_DELIVERY_SETTINGS, parseCorreos } from './delivery';
export type { DeliveryDeps, DeliveryOutcome, DeliverySettings } from './delivery';
export { ExchangeReplyDelivery } from './exchange-replies';
export type { ExchangeReplyDeliveryDeps, ExchangeReplyOutcome } from './exchange-replies';
