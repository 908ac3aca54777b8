/**
 * The webhooks service in this process, for the end-to-end tests: a test PKI (the CA the service
 * trusts for the https receivers the test starts with `pki`), an SMTP sink for its mails, and the
 * service on the test's database and broker with loopback receivers allowed (NODE_ENV=test) and
 * short delays, ready (both consumers joined). `close()` stops the service and the SMTP sink.
 */
import type { Messaging } from '@dte/messaging';
import { createLogger } from '@dte/service-runtime';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../services/webhooks/src/config';
import { startWebhooksService, type RunningService } from '../../services/webhooks/src/service';
import { makeTestPki, type TestPki } from '../../services/webhooks/test/support/test-ca';
import { SmtpSink } from '../../services/webhooks/test/support/smtp';
import type { TestApi } from '../../services/api/test/support/test-api';

export interface WebhooksService {
  pki: TestPki;
  smtp: SmtpSink;
  service: RunningService;
  close(): Promise<void>;
}

/**
 * Where the service reads and what opens the signing secrets: the api's database and master key
 * (the api sealed them), or a database and the key the test sealed them with.
 */
export type WebhooksStore =
  | { api: Pick<TestApi, 'db' | 'config'> }
  | { dataSource: DataSource; masterKey: string; masterKeyId: string };

export async function startTestWebhooks(
  opts: WebhooksStore & {
    /** the logger's name */
    name: string;
    messaging: Messaging;
    /** more WEBHOOKS_* settings, over the defaults (four retries 200 ms apart, one retry partition) */
    env?: Record<string, string>;
    logLevel?: 'warn' | 'fatal';
  },
): Promise<WebhooksService> {
  const store =
    'api' in opts
      ? {
          dataSource: opts.api.db.dataSource,
          masterKey: opts.api.config.masterKey,
          masterKeyId: opts.api.config.masterKeyId,
        }
      : opts;
  const pki = makeTestPki(['127.0.0.1']);
  const smtp = await new SmtpSink().start();
  try {
    const config = loadConfig({
      NODE_ENV: 'test',
      WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: 'true',
      WEBHOOKS_TEST_CA_FILE: pki.caFile,
      WEBHOOKS_HEALTH_PORT: '0',
      WEBHOOKS_RETRY_DELAYS: '200ms,200ms,200ms,200ms',
      WEBHOOKS_SWEEP_INTERVAL: '200ms',
      WEBHOOKS_RETRY_PARTITIONS: '1',
      SMTP_URL: smtp.url,
      MASTER_KEY: store.masterKey,
      MASTER_KEY_ID: store.masterKeyId,
      ...opts.env,
    });
    const logger = createLogger(opts.name);
    logger.level = opts.logLevel ?? 'warn';
    const service = await startWebhooksService(config, logger, {
      dataSource: store.dataSource,
      messaging: opts.messaging,
    });
    await service.ready();
    return {
      pki,
      smtp,
      service,
      async close() {
        await service.close();
        await smtp.close();
      },
    };
  } catch (err) {
    await smtp.close();
    throw err;
  }
}

/**
 * The api reads the test-only loopback setting when its routes are built (honoured with
 * NODE_ENV=test): set both for the tests that register https receivers on 127.0.0.1 over HTTP;
 * the function returned puts them back as they were.
 */
export function allowLoopbackReceivers(): () => void {
  const saved = {
    NODE_ENV: process.env.NODE_ENV,
    WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: process.env.WEBHOOKS_ALLOW_LOOPBACK_RECEIVER,
  };
  process.env.NODE_ENV = 'test';
  process.env.WEBHOOKS_ALLOW_LOOPBACK_RECEIVER = 'true';
  return () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
