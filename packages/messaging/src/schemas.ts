/**
 * Avro schemas of topics: read from `<schemaDir>/<name>.avsc`, registered in the registry under
 * the subject `<topic>-value` (Confluent's TopicNameStrategy), and used to encode and decode the
 * registry's wire format (magic byte, schema id, Avro body).
 */
import { registryAgent, type RegistrySecurity } from './security';
import fs from 'node:fs';
import path from 'node:path';
import { SchemaRegistry, SchemaType } from '@kafkajs/confluent-schema-registry';
import { logicalTypes } from './logical-types';

export class SchemaNotFoundError extends Error {
  constructor(name: string, file: string) {
    super(`Avro schema "${name}" not found (looked for ${file})`);
    this.name = 'SchemaNotFoundError';
  }
}

/** The text of schemas/avro/<name>.avsc, checked to be JSON. */
export function readAvroSchema(schemaDir: string, name: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new SchemaNotFoundError(name, `${schemaDir}/<invalid name>`);
  const file = path.join(schemaDir, `${name}.avsc`);
  if (!fs.existsSync(file)) throw new SchemaNotFoundError(name, file);
  const text = fs.readFileSync(file, 'utf8');
  JSON.parse(text);
  return text;
}

export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

export class SchemaCatalog {
  private readonly registry: SchemaRegistry;
  private readonly ids = new Map<string, Promise<number>>();

  constructor(
    registryUrl: string,
    private readonly schemaDir: string,
    security: RegistrySecurity = {},
  ) {
    const agent = registryAgent(security.tls);
    this.registry = new SchemaRegistry(
      { host: registryUrl, ...(security.auth ? { auth: security.auth } : {}), ...(agent ? { agent } : {}) },
      { [SchemaType.AVRO]: { logicalTypes } },
    );
  }

  /**
   * The registry id of schema `name` for `topic` (already prefixed): registered on first use
   * (the registry answers with the existing id when the same schema is there already, and
   * refuses a schema that is not BACKWARD compatible with the subject's latest version).
   */
  idFor(topic: string, name: string): Promise<number> {
    const key = `${topic}\u0000${name}`;
    let id = this.ids.get(key);
    if (!id) {
      const schema = readAvroSchema(this.schemaDir, name);
      id = this.registry
        .register({ type: SchemaType.AVRO, schema }, { subject: valueSubject(topic) })
        .then((r) => r.id);
      id.catch(() => this.ids.delete(key));
      this.ids.set(key, id);
    }
    return id;
  }

  /** The id the registry holds for the latest version of the topic's value subject. */
  latestId(topic: string): Promise<number> {
    return this.registry.getLatestSchemaId(valueSubject(topic));
  }

  encode(id: number, value: unknown): Promise<Buffer> {
    return this.registry.encode(id, value);
  }

  /** Decodes a registry-framed Avro value (the writer schema is fetched by its id, then cached). */
  decode(buffer: Buffer): Promise<unknown> {
    return this.registry.decode(buffer);
  }

  /** The schema id carried by a registry-framed value (bytes 1-4 after the magic byte 0). */
  static schemaIdOf(buffer: Buffer): number {
    if (buffer.length < 5 || buffer[0] !== 0) throw new Error('not a schema-registry framed value');
    return buffer.readInt32BE(1);
  }
}
