export * from './classification';
export * from './transitions';
export * from './events';
