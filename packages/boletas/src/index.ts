export * from './batch';
export * from './emission';
export * from './flags';
export * from './reads';
export * from './records';
