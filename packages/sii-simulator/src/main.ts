/** `npm start -w @dte/sii-simulator`: the simulator as its own process. */
import { createLogger, onShutdown } from '@dte/service-runtime';
import { readSimulatorConfig } from './config';
import { startSiiSimulator } from './server';

async function main(): Promise<void> {
  const log = createLogger('sii-simulator');
  const sim = await startSiiSimulator(readSimulatorConfig());
  log.info(
    {
      cert: `${sim.url}/cert`,
      prod: `${sim.url}/prod`,
      autoEnrol: sim.options.autoEnrol,
      timings: sim.options.timings,
    },
    'SII simulator listening',
  );
  onShutdown(log, [() => sim.close()]);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
