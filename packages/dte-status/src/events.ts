import { classify } from './classification';

export type WebhookEventType = 'dte.emitted' | 'dte.status_changed' | 'dte.accepted' | 'dte.rejected';

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'dte.emitted',
  'dte.status_changed',
  'dte.accepted',
  'dte.rejected',
];

/**
 * Statuses internal to the service before anything is sent (queued, signed) are not
 * authority status changes and produce no status_changed event; from `sending` on every
 * change does. This is what makes an accepted emission yield the spec's "typically four"
 * deliveries (sending, one intermediate, the verdict pair).
 */
const SILENT_STATUSES = new Set(['queued', 'signed']);

/**
 * Events produced by one applied transition to `next` (already checked with shouldApply).
 * dte.accepted / dte.rejected always travel with their own dte.status_changed; requiere_accion
 * outcomes only as status_changed; imported documents produce nothing. dte.emitted is produced
 * once, when the document first has a track id (see emittedNow).
 */
export function eventsForTransition(
  next: string,
  opts: { imported?: boolean; emittedNow?: boolean } = {},
): WebhookEventType[] {
  if (opts.imported) return [];
  const events: WebhookEventType[] = [];
  if (opts.emittedNow) events.push('dte.emitted');
  if (SILENT_STATUSES.has(next)) return events;
  events.push('dte.status_changed');
  const { categoria } = classify(next);
  if (categoria === 'aceptado') events.push('dte.accepted');
  if (categoria === 'rechazado') events.push('dte.rejected');
  return events;
}
