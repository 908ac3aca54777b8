import crypto from 'node:crypto';
import { classify, type WebhookEventType } from '@dte/status';

/** What of a dte-status record the envelope needs (no RUT, names or amounts ever). */
export interface StatusFacts {
  dte_id: string;
  tipo_dte: number;
  folio: number;
  sii_status: string;
  sii_env: 'cert' | 'prod';
  observed_at: string;
}

export interface WebhookEnvelope {
  id: string;
  type: WebhookEventType;
  created_at: string;
  data: StatusFacts & {
    terminal: boolean;
    categoria: string;
    accion: string;
  };
}

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';
export const TEST_SII_STATUS = 'TEST';
/** the spec leaves tipo_dte of a test delivery open; a factura (33) is what receivers most expect */
export const TEST_TIPO_DTE = 33;

// Namespace of the event ids derived from the status change that caused them.
const EVENT_ID_NAMESPACE = 'a3a5b0e4-5f0c-4d56-9d8e-2f1b6f1c7e11';

/** RFC 4122 version 5 uuid (SHA-1, name-based) */
function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = crypto.createHash('sha1').update(ns).update(name).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const h = hash.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * Event id of one event type of one status change. Derived, not random, so a replayed status
 * record yields the same ids (deliveries are unique per subscription and event id) and
 * dte.emitted, which belongs to the document rather than to one change, has one id per document.
 */
export function eventIdFor(type: WebhookEventType, statusEventId: string, dteId: string): string {
  const name = type === 'dte.emitted' ? `${dteId}/dte.emitted` : `${statusEventId}/${type}`;
  return `evt_${uuidV5(name, EVENT_ID_NAMESPACE)}`;
}

export function randomEventId(): string {
  return `evt_${crypto.randomUUID()}`;
}

/** The envelope exactly as the spec's Events > Envelope; classification comes from @dte/status. */
export function buildEnvelope(
  id: string,
  type: WebhookEventType,
  facts: StatusFacts,
  createdAtMs: number,
): WebhookEnvelope {
  const { terminal, categoria, accion } = classify(facts.sii_status);
  return {
    id,
    type,
    created_at: new Date(createdAtMs).toISOString(),
    data: {
      dte_id: facts.dte_id,
      tipo_dte: facts.tipo_dte,
      folio: facts.folio,
      sii_status: facts.sii_status,
      sii_env: facts.sii_env,
      observed_at: facts.observed_at,
      terminal,
      categoria,
      accion,
    },
  };
}

/** The envelope of POST /webhooks/:id/test: status_changed, sii_status TEST, nil dte_id, folio 0. */
export function buildTestEnvelope(siiEnv: 'cert' | 'prod', nowMs: number): WebhookEnvelope {
  const at = new Date(nowMs).toISOString();
  return buildEnvelope(
    randomEventId(),
    'dte.status_changed',
    {
      dte_id: NIL_UUID,
      tipo_dte: TEST_TIPO_DTE,
      folio: 0,
      sii_status: TEST_SII_STATUS,
      sii_env: siiEnv,
      observed_at: at,
    },
    nowMs,
  );
}
