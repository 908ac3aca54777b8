export * from './base-path';
export * from './validate';
