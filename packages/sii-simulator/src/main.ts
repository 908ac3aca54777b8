/** `npm start -w @dte/sii-simulator`: the simulator as its own process. */
import { existsSync, writeFileSync } from 'node:fs';
import { createLogger, onShutdown } from '@dte/service-runtime';
import { readSimulatorConfig } from './config';
import { startSiiSimulator } from './server';

async function main(): Promise<void> {
  const log = createLogger('sii-simulator');
  const keysFile = process.env.SII_SIMULATOR_KEYS_FILE;
  const sim = await startSiiSimulator(readSimulatorConfig());
  if (keysFile && !existsSync(keysFile)) {
    // first start with a keys file: keep the keys made now, so CAFs stay valid across restarts
    writeFileSync(keysFile, JSON.stringify(sim.siiKeys, null, 2), { mode: 0o600 });
    log.info({ keysFile }, 'SII keys written');
  }
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
