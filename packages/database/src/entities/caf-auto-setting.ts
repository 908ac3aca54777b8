import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** Automatic stamping of a production company: request folios when a type runs low. */
@Entity({ name: 'caf_auto_settings' })
export class CafAutoSetting {
  @PrimaryColumn({ name: 'company_id', type: 'uuid' })
  companyId!: string;

  @PrimaryColumn({ name: 'tipo_dte', type: 'integer' })
  tipoDte!: number;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ type: 'boolean' })
  enabled!: boolean;

  /** request more when remaining folios fall to this */
  @Column({ type: 'integer' })
  threshold!: number;

  /** how many folios to request each time */
  @Column({ type: 'integer' })
  cantidad!: number;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
