export * from './service-error';
export * from './catalog';
