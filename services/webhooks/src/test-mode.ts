import fs from 'node:fs';
import tls from 'node:tls';
import type { UrlPolicy } from './url-policy';

/**
 * The test-only settings and the one rule that keeps them out of production.
 *
 * WEBHOOKS_ALLOW_LOOPBACK_RECEIVER=true lets a receiver on 127.0.0.0/8 or ::1 (any port) be
 * registered and called; WEBHOOKS_TEST_CA_FILE adds a CA (PEM) to the roots deliveries trust.
 * Either one is honoured only when NODE_ENV is exactly "test"; with any other NODE_ENV
 * (production, unset, anything) the process refuses to start. So a production configuration
 * can never enable them, even by mistake.
 */
export interface TestModeSettings {
  policy: UrlPolicy;
  /** CA list for deliveries: undefined = system roots only */
  ca?: string[];
}

export class TestModeError extends Error {}

export function readTestMode(env: NodeJS.ProcessEnv): TestModeSettings {
  const loopbackRaw = env.WEBHOOKS_ALLOW_LOOPBACK_RECEIVER ?? '';
  const caFile = env.WEBHOOKS_TEST_CA_FILE ?? '';
  const allowLoopback = /^(1|true|yes)$/i.test(loopbackRaw);
  if (loopbackRaw !== '' && !allowLoopback && !/^(0|false|no)$/i.test(loopbackRaw))
    throw new TestModeError(`WEBHOOKS_ALLOW_LOOPBACK_RECEIVER: expected true or false, got "${loopbackRaw}"`);
  if ((allowLoopback || caFile !== '') && env.NODE_ENV !== 'test') {
    throw new TestModeError(
      'WEBHOOKS_ALLOW_LOOPBACK_RECEIVER / WEBHOOKS_TEST_CA_FILE are test-only settings: they are refused ' +
        `unless NODE_ENV=test (NODE_ENV is ${env.NODE_ENV === undefined ? 'unset' : `"${env.NODE_ENV}"`})`,
    );
  }
  const settings: TestModeSettings = { policy: { allowLoopback } };
  if (caFile !== '') settings.ca = [...tls.rootCertificates, fs.readFileSync(caFile, 'utf8')];
  return settings;
}
