/** A value of schemas/avro/foundation-demo.avsc, the schema the messaging foundation tests send. */
export interface FoundationDemo {
  id: string;
  amount: number;
  kind: 'CREATED' | 'SIGNED';
  note: string | null;
  observed_at: Date;
}
