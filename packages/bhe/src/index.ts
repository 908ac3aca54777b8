export * from './bhe';
