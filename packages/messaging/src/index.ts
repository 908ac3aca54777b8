// @dte/messaging: the only module that imports kafkajs and @kafkajs/confluent-schema-registry.
export * from './config';
export * from './kafka';
export * from './topics';
export * from './producer';
export * from './consumer';
export { SchemaCatalog, SchemaNotFoundError, readAvroSchema, valueSubject } from './schemas';
export * from './security';
