export * from './outbox/enqueue';
export * from './outbox/metrics';
export * from './outbox/purge';
export * from './outbox/relay';
export * from './projector/pipeline';
export * from './projector/projector';
export * from './projector/stage-metrics';
export * from './status-record';
