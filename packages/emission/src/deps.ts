import type { DomainDeps } from '@dte/tenancy';
import type { ExchangeRateConfig } from './bcch-exchange-rate';

/** The configuration emission reads: backpressure, the printed form's mail, the receptor's delivery. */
export interface EmissionConfig extends ExchangeRateConfig {
  /**
   * Backpressure (backlog-gate.ts): documents of a company and environment accepted but not
   * yet taken by the SII above which emission answers 503 sii_unavailable; 0 disables the check
   */
  emissionBacklogMax: number;
  /** Retry-After of that answer, seconds */
  emissionBacklogRetryAfterSec: number;
  /** how long a backlog count well under the bound is reused, ms (0: count on every POST) */
  emissionBacklogCacheMs: number;
  /** where mail leaves (smtp://host:port); unset = the api sends no mail (muestras/send answers send_not_configured) */
  smtpUrl?: string;
  mailFrom: string;
  /** the SII's mailbox for certification sample prints; unset = muestras/send answers send_not_configured */
  muestrasMailTo?: string;
  /** seconds between receptor-delivery sweeps (intercambio mail once the SII accepts); 0 disables them here */
  deliveryIntervalSec: number;
}

export type EmissionDeps = DomainDeps<EmissionConfig>;
