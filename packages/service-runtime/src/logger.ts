import pino from 'pino';

export type Logger = pino.Logger;

/**
 * What never reaches a log: SQL parameters and the driver's own error fields (they carry the
 * values of a failed query: RUTs, names, amounts, documents), request credentials, and the
 * `detail` of an error (it may name a person's RUT). Paths as pino's redact syntax.
 */
export const LOG_REDACT_PATHS = [
  'err.parameters',
  'err.driverError',
  'err.detail',
  'err.where',
  'err.cause.parameters',
  'err.cause.driverError',
  'err.cause.detail',
  'parameters',
  'params',
  'req.headers.authorization',
  'req.headers.cookie',
  'password',
  'secret',
];

/** One JSON logger per process; LOG_LEVEL picks the level (info by default). */
export function createLogger(service: string): Logger {
  return pino({
    name: service,
    level: process.env.LOG_LEVEL ?? 'info',
    redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
  });
}
