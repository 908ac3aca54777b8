import { expect } from 'chai';
import { MessagingConfigError, messagingConfigFromEnv } from '@dte/messaging';

describe('foundation: messaging configuration from the environment', () => {
  const base = { KAFKA_BROKERS: '127.0.0.1:9092', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081' };

  it('reads KAFKA_SESSION_TIMEOUT_MS, and leaves it to the default when absent', () => {
    expect(
      messagingConfigFromEnv('t', { ...base, KAFKA_SESSION_TIMEOUT_MS: '8000' }).sessionTimeoutMs,
    ).to.equal(8000);
    expect(messagingConfigFromEnv('t', base)).to.not.have.property('sessionTimeoutMs');
  });

  it('refuses a session timeout the broker would refuse (outside 6000-1800000 ms) or that is not a number', () => {
    for (const bad of ['5999', '1800001', '10s', '-1', '1.5e4']) {
      expect(() => messagingConfigFromEnv('t', { ...base, KAFKA_SESSION_TIMEOUT_MS: bad }), bad)
        .to.throw(MessagingConfigError)
        .with.property('message')
        .that.matches(/KAFKA_SESSION_TIMEOUT_MS must be whole milliseconds from 6000 to 1800000/);
    }
  });

  it('names every problem at once', () => {
    expect(() => messagingConfigFromEnv('t', { KAFKA_SESSION_TIMEOUT_MS: 'x' }))
      .to.throw(MessagingConfigError)
      .with.property('message')
      .that.matches(/KAFKA_BROKERS is required.*SCHEMA_REGISTRY_URL is required.*KAFKA_SESSION_TIMEOUT_MS/);
  });
});
