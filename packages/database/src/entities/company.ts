import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * An emitter (emisor) of an organization: its SII profile and, per environment, the SII
 * resolution that authorizes it to issue DTEs.
 */
@Entity({ name: 'companies' })
@Index('companies_org_rut_uq', ['organizationId', 'rut'], { unique: true })
export class Company {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  /** `12345678-5`, check digit upper-case */
  @Column({ type: 'text' })
  rut!: string;

  @Column({ name: 'razon_social', type: 'text' })
  razonSocial!: string;

  @Column({ type: 'text', nullable: true })
  giro!: string | null;

  @Column({ type: 'text', nullable: true })
  direccion!: string | null;

  @Column({ type: 'text', nullable: true })
  comuna!: string | null;

  @Column({ name: 'actividad_economica', type: 'integer', nullable: true })
  actividadEconomica!: number | null;

  @Column({ name: 'resolucion_cert_numero', type: 'integer', nullable: true })
  resolucionCertNumero!: number | null;

  @Column({ name: 'resolucion_cert_fecha', type: 'date', nullable: true })
  resolucionCertFecha!: string | null;

  @Column({ name: 'resolucion_prod_numero', type: 'integer', nullable: true })
  resolucionProdNumero!: number | null;

  @Column({ name: 'resolucion_prod_fecha', type: 'date', nullable: true })
  resolucionProdFecha!: string | null;

  /** RUTs of people whose certificates may sign for the company, besides the company's own */
  @Column({ name: 'signer_ruts', type: 'text', array: true, default: () => "'{}'" })
  signerRuts!: string[];

  /** document types the company is certified to issue in production (empty until an operator opens them) */
  @Column({ name: 'prod_tipos', type: 'integer', array: true, default: () => "'{}'" })
  prodTipos!: number[];

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
