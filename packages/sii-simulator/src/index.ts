export { startSiiSimulator, createApp, type RunningSimulator } from './server';
export { withDefaults, DEFAULT_INTERMEDIATES, type SimulatorOptions, type Timings } from './options';
export { parseTrigger, OPERATIONS, type Trigger, type Operation } from './triggers';
export { readSimulatorConfig } from './config';
export { REAL_HOST, REGISTER_PATH, SII_IDK, SII_RUT, type SiiEnv } from './types';
