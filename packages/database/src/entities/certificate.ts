import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A signing certificate (.p12) of an organization. The file and its password are sealed with
 * envelope encryption (see packages/secrets/src/envelope.ts for the format); only metadata
 * is in clear. Deletion is soft (`deleted_at`).
 */
@Entity({ name: 'certificates' })
export class Certificate {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ type: 'text' })
  label!: string;

  /** RUT of the certificate holder */
  @Column({ type: 'text' })
  rut!: string;

  @Column({ type: 'text' })
  subject!: string;

  @Column({ name: 'serial_number', type: 'text' })
  serialNumber!: string;

  /** hex SHA-256 of the DER certificate */
  @Column({ name: 'fingerprint_sha256', type: 'text' })
  fingerprintSha256!: string;

  @Column({ name: 'not_before', type: 'timestamptz' })
  notBefore!: Date;

  @Column({ name: 'not_after', type: 'timestamptz' })
  notAfter!: Date;

  @Column({ name: 'p12_sealed', type: 'jsonb' })
  p12Sealed!: Record<string, unknown>;

  @Column({ name: 'password_sealed', type: 'jsonb' })
  passwordSealed!: Record<string, unknown>;

  /** the organization's default signing certificate */
  @Column({ name: 'is_default', type: 'boolean', default: false })
  isDefault!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;
}
