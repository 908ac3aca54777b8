import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A folio authorization (CAF) of a company for one environment and document type, with the
 * next folio to hand out. The folio allocator is the only writer of `next_folio`. The CAF
 * private key (RSASK) is sealed; the <CAF> element (public) is kept as received.
 */
@Entity({ name: 'cafs' })
export class Caf {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ name: 'company_id', type: 'uuid' })
  companyId!: string;

  @Column({ type: 'text' })
  environment!: 'cert' | 'prod';

  @Column({ name: 'tipo_dte', type: 'integer' })
  tipoDte!: number;

  @Column({ name: 'rut_emisor', type: 'text' })
  rutEmisor!: string;

  @Column({ type: 'bigint' })
  desde!: string;

  @Column({ type: 'bigint' })
  hasta!: string;

  /** next folio to allocate; `hasta + 1` when exhausted */
  @Column({ name: 'next_folio', type: 'bigint' })
  nextFolio!: string;

  @Column({ name: 'fecha_autorizacion', type: 'date' })
  fechaAutorizacion!: string;

  /** null for types whose CAF does not expire */
  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  @Column({ type: 'integer' })
  idk!: number;

  @Column({ name: 'caf_xml', type: 'text' })
  cafXml!: string;

  @Column({ name: 'rsa_public_key_pem', type: 'text' })
  rsaPublicKeyPem!: string;

  @Column({ name: 'rsa_private_key_sealed', type: 'jsonb' })
  rsaPrivateKeySealed!: Record<string, unknown>;

  /** upload or sii_request */
  @Column({ type: 'text' })
  source!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt!: Date | null;
}
