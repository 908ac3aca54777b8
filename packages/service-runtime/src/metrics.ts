/**
 * The Prometheus metrics of every service, declared in one place (docs/operations.md "Metrics" lists them).
 * Each service serves them as Prometheus text on GET /metrics: the api on its own port, the
 * others on their health server (see health.ts). Code that sees an event records it with one
 * call (`metrics.emissions.inc(...)`); gauges that describe the state of PostgreSQL or Kafka
 * (outbox depth, consumer lag) are read when Prometheus scrapes, through `onScrape` sources.
The outbox gauges are only meaningful where a source is registered (the api).
 *
 * One registry per process: several services in one process (tests, the local stack) share it,
 * as they would share a pod's /metrics if they ran together.
 */
import client from 'prom-client';

export const metricsRegistry = new client.Registry();
// the standard process_* and nodejs_* metrics, under their usual names (dashboards expect them)
client.collectDefaultMetrics({ register: metricsRegistry });

const registers = [metricsRegistry];

/** Latency buckets (seconds) from a few ms to the SII's slow minutes. */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STAGE_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600];
const SII_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export const metrics = {
  /** api: every answered request, by method, route pattern (not the raw path) and status */
  httpRequestDuration: new client.Histogram({
    name: 'dte_http_request_duration_seconds',
    help: 'HTTP requests answered by the api, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers,
  }),
  /** api: POST /dtes by document type and outcome (`queued`, `replayed` or the error code) */
  emissions: new client.Counter({
    name: 'dte_emissions_total',
    help: 'Emission requests (POST /dtes) by tipo_dte and outcome: queued, replayed, or the catalog error code',
    labelNames: ['tipo_dte', 'outcome'] as const,
    registers,
  }),
  /** api: write requests refused at once because API_MAX_INFLIGHT were in progress (http/inflight-limit.ts) */
  inflightRejections: new client.Counter({
    name: 'dte_http_inflight_rejections_total',
    help: 'Write requests the api refused with 429 rate_limit because API_MAX_INFLIGHT writes were already in progress, by method',
    labelNames: ['method'] as const,
    registers,
  }),
  /** api: write requests (POST/PUT/PATCH/DELETE under /api/v1) in progress now */
  inflightWrites: new client.Gauge({
    name: 'dte_http_inflight_writes',
    help: 'Write requests under /api/v1 the api is processing now (bounded by API_MAX_INFLIGHT)',
    registers,
  }),
  /** the projector: time a document spent between two stages of its way to a verdict */
  stageDuration: new client.Histogram({
    name: 'dte_stage_duration_seconds',
    help: 'Time between two observed stages of a document (queued, signed, sending, at_sii, verdict)',
    labelNames: ['from', 'to'] as const,
    buckets: STAGE_BUCKETS,
    registers,
  }),
  /** documents that reached a verdict, by category (aceptado, rechazado, requiere_accion ...) */
  verdicts: new client.Counter({
    name: 'dte_verdicts_total',
    help: 'Documents that reached a terminal SII status, by categoria of @dte/status',
    labelNames: ['categoria'] as const,
    registers,
  }),
  /** sii-client: every HTTP exchange with the SII, by operation and outcome */
  siiRequestDuration: new client.Histogram({
    name: 'dte_sii_request_duration_seconds',
    help: 'HTTP exchanges with the SII by operation and outcome (ok, http_<status class>, or the SiiError kind)',
    labelNames: ['operation', 'outcome'] as const,
    buckets: SII_BUCKETS,
    registers,
  }),
  /** sii-client: every SiiError raised, by operation and kind (transient, auth, rejected, protocol) */
  siiErrors: new client.Counter({
    name: 'dte_sii_errors_total',
    help: 'Errors of SII calls by operation and kind (transient, auth, rejected, protocol)',
    labelNames: ['operation', 'kind'] as const,
    registers,
  }),
  /** webhooks: every delivery attempt by outcome */
  webhookDeliveries: new client.Counter({
    name: 'dte_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, another attempt scheduled), exhausted (failed, no attempt left or endpoint disabled), skipped (already taken)',
    labelNames: ['outcome'] as const,
    registers,
  }),
  /** read on scrape: unpublished outbox rows and the age of the oldest (api with the relay) */
  outboxDepth: new client.Gauge({
    name: 'dte_outbox_depth',
    help: 'Outbox rows not yet published to Kafka (set aside rows excluded)',
    registers,
  }),
  outboxOldestAge: new client.Gauge({
    name: 'dte_outbox_oldest_age_seconds',
    help: 'Age of the oldest unpublished outbox row (0 when none)',
    registers,
  }),
  /** read on scrape (api): this month's documents per plan and environment, summed over organizations */
  billingDocumentsMonth: new client.Gauge({
    name: 'dte_billing_documents_month',
    help: "Documents issued this month (America/Santiago) per plan and environment, summed over the plan's organizations",
    labelNames: ['plan', 'sii_env'] as const,
    registers,
  }),
  /** read on scrape: the lag of each consumer group this process runs, summed over partitions */
  consumerLag: new client.Gauge({
    name: 'dte_kafka_consumer_lag',
    help: 'Messages not yet consumed by the consumer group (committed offset to high watermark), by group and topic',
    labelNames: ['group', 'topic'] as const,
    registers,
  }),
};

type ScrapeSource = () => Promise<void>;
const sources = new Set<ScrapeSource>();
let running: Promise<void> | undefined;

/**
 * Registers a function that refreshes gauges when Prometheus scrapes (at most one run at a time,
 * shared by every gauge that asks). A failing source leaves its gauges as they were and shows in
 * dte_metrics_scrape_errors_total. Returns the function that unregisters it.
 */
export function onScrape(source: ScrapeSource): () => void {
  sources.add(source);
  return () => sources.delete(source);
}

const scrapeErrors = new client.Counter({
  name: 'dte_metrics_scrape_errors_total',
  help: 'Scrape-time sources (outbox, consumer lag) that failed to refresh their gauges',
  registers,
});

/** A source that has not answered within this many ms counts as failed (a scrape must not hang). */
const SOURCE_TIMEOUT_MS = 5000;

function withTimeout(source: ScrapeSource): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((_, reject) => {
    timer = setTimeout(() => reject(new Error('scrape source timed out')), SOURCE_TIMEOUT_MS);
  });
  return Promise.race([source(), timeout]).finally(() => clearTimeout(timer));
}

function runScrapeSources(): Promise<void> {
  running ??= (async () => {
    await Promise.all(
      [...sources].map((s) =>
        withTimeout(s).catch(() => {
          scrapeErrors.inc();
        }),
      ),
    );
  })().finally(() => {
    running = undefined;
  });
  return running;
}

/** The Prometheus text of every metric of this process, and its content type. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  await runScrapeSources();
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}

/** Starts a timer; the returned function records the elapsed seconds on `histogram` with `labels`. */
export function startTimer<L extends string>(
  histogram: client.Histogram<L>,
): (labels: Partial<Record<L, string | number>>) => void {
  const t0 = process.hrtime.bigint();
  return (labels) => histogram.observe(labels, Number(process.hrtime.bigint() - t0) / 1e9);
}
