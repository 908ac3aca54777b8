/**
 * Standalone entry point of the api's pipeline side (outbox relay + dte-status projector), for a
 * deployment that runs it apart from the HTTP replicas (those then set API_PIPELINE=off):
 * `tsx services/api/src/pipeline-main.ts`. Reads DATABASE_URL, DATABASE_SCHEMA and the
 * messaging variables (see pipeline.ts).
 */
import { createLogger, onShutdown } from '@dte/service-runtime';
import { startApiPipeline } from '@dte/pipeline';
import { openApiDatabase } from './db/data-source';

async function main(): Promise<void> {
  const logger = createLogger('api-pipeline');
  const url = process.env.DATABASE_URL || 'postgres://dte:dte@127.0.0.1:15432/dte';
  const dataSource = await openApiDatabase({ url, schema: process.env.DATABASE_SCHEMA || undefined });
  const pipeline = await startApiPipeline(dataSource, logger, { ...process.env, API_PIPELINE: 'on' });
  onShutdown(logger, [() => pipeline.stop(), () => dataSource.destroy()]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
