/**
 * `npm run topics -w @dte/messaging`: creates the emission pipeline's topics (pipelineTopicSpecs:
 * explicit partitions, dte-status compacted) on KAFKA_BROKERS, under KAFKA_TOPIC_PREFIX when set.
 * Existing topics keep their data; see ensureTopics for what is adjusted.
 */
import { messagingConfigFromEnv } from '../config';
import { createKafka } from '../kafka';
import { pipelineTopicSpecs } from '../topics';

async function main(): Promise<void> {
  const messaging = createKafka({ ...messagingConfigFromEnv('dte-topics'), logLevel: 'error' });
  try {
    const specs = pipelineTopicSpecs();
    await messaging.ensureTopics(specs);
    for (const s of specs) {
      const configs = Object.entries(s.configs ?? {}).map(([k, v]) => `${k}=${v}`);
      console.log(
        `topic ${messaging.topic(s.name)}: ${s.partitions} partitions${configs.length ? `, ${configs.join(', ')}` : ''}`,
      );
    }
  } finally {
    await messaging.disconnect();
  }
}

main().catch((err: Error) => {
  console.error(`ensure topics failed: ${err.message}`);
  process.exit(1);
});
