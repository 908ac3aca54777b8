export * from './config';
export * from './logger';
export * from './health';
export * from './shutdown';
export * from './work-loop';
export * from './metrics';
