/**
 * Avro logical types the project's schemas use, mapped to JavaScript values for avsc:
 * `timestamp-millis` (a long) is a Date. A value of the wrong JavaScript type fails validation
 * (it is never coerced).
 */
import { types, type Schema, type Type } from 'avsc';

export class TimestampMillisType extends types.LogicalType {
  protected override _fromValue(value: number): Date {
    return new Date(value);
  }

  protected override _toValue(value: unknown): number | undefined {
    return value instanceof Date && !Number.isNaN(value.getTime()) ? value.getTime() : undefined;
  }

  protected override _resolve(type: Type): ((value: number) => number) | undefined {
    const name = (type as Type & { typeName?: string }).typeName;
    if (name === 'long' || name === 'logical:timestamp-millis') return (value: number) => value;
    return undefined;
  }
}

export const logicalTypes: Record<string, new (schema: Schema, opts?: unknown) => types.LogicalType> = {
  'timestamp-millis': TimestampMillisType,
};
