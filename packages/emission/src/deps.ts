import type { DomainDeps } from '@dte/tenancy';
import type { ExchangeRateConfig } from './bcch-exchange-rate';

/** The configuration emission reads: backpressure, the printed form's mail, the receptor's delivery. */
export interface EmissionConfig extends ExchangeRateConfig {
  emissionBacklogMax: number;
  emissionBacklogRetryAfterSec: number;
  emissionBacklogCacheMs: number;
  smtpUrl?: string;
  mailFrom: string;
  muestrasMailTo?: string;
  deliveryIntervalSec: number;
}

export type EmissionDeps = DomainDeps<EmissionConfig>;
