export * from './service-error';
export * from './catalog';
export * from './api-error';
