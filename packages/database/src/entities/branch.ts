import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A branch (sucursal) of a company, with its SII branch code when it has one. */
@Entity({ name: 'branches' })
export class Branch {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'company_id', type: 'uuid' })
  companyId!: string;

  @Column({ type: 'text' })
  nombre!: string;

  /** CdgSIISucur */
  @Column({ name: 'codigo_sii', type: 'integer', nullable: true })
  codigoSii!: number | null;

  @Column({ type: 'text' })
  direccion!: string;

  @Column({ type: 'text' })
  comuna!: string;

  /** a closed branch stays for history but is no longer current */
  @Column({ name: 'closed_at', type: 'timestamptz', nullable: true })
  closedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
