import pino from 'pino';

export type Logger = pino.Logger;

/** One JSON logger per process; LOG_LEVEL picks the level (info by default). */
export function createLogger(service: string): Logger {
  return pino({ name: service, level: process.env.LOG_LEVEL ?? 'info' });
}
