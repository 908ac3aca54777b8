import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique } from 'typeorm';

/**
 * One issued document (table `dtes`): the emission input, the built document, the folio and its
 * CAF, and the read model of its status. Writers, each of its own columns:
 *   - api (POST /dtes): everything at creation, in the transaction that takes the folio and
 *     writes the outbox row;
 *   - signer: signed_xml, signed_at;
 *   - sii-uploader: upload_id, track_id (the status itself goes through dte-status);
 *   - sii-poller: sii_last_polled;
 *   - projector (api side, consumer of dte-status): sii_status, sii_glosa, observed_at and
 *     track_id when the record carries one and the row has none.
 * Money is bigint (CLP), read back as strings by pg.
 */
@Entity({ name: 'dtes' })
@Unique('dtes_company_env_tipo_folio_uq', ['companyId', 'siiEnv', 'tipoDte', 'folio'])
@Unique('dtes_company_env_idempotency_key_uq', ['companyId', 'siiEnv', 'idempotencyKey'])
@Index('dtes_org_created_idx', ['organizationId', 'createdAt', 'id'])
export class Dte {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId!: string;

  @Column({ name: 'company_id', type: 'uuid' })
  companyId!: string;

  @Column({ name: 'sii_env', type: 'text' })
  siiEnv!: 'cert' | 'prod';

  @Column({ name: 'tipo_dte', type: 'integer' })
  tipoDte!: number;

  @Column({ type: 'bigint' })
  folio!: string;

  @Column({ name: 'caf_id', type: 'uuid' })
  cafId!: string;

  @Column({ name: 'certificate_id', type: 'uuid' })
  certificateId!: string;

  @Column({ name: 'rut_emisor', type: 'text' })
  rutEmisor!: string;

  @Column({ name: 'rut_receptor', type: 'text', nullable: true })
  rutReceptor!: string | null;

  @Column({ name: 'razon_social_receptor', type: 'text' })
  razonSocialReceptor!: string;

  /** YYYY-MM-DD */
  @Column({ name: 'fecha_emision', type: 'date' })
  fechaEmision!: string;

  @Column({ name: 'monto_neto', type: 'bigint', default: 0 })
  montoNeto!: string;

  @Column({ name: 'monto_exento', type: 'bigint', default: 0 })
  montoExento!: string;

  @Column({ type: 'bigint', default: 0 })
  iva!: string;

  @Column({ name: 'monto_total', type: 'bigint', default: 0 })
  montoTotal!: string;

  /** the POST /dtes body as received */
  @Column({ name: 'input', type: 'jsonb' })
  input!: Record<string, unknown>;

  /** the DteDocument built by @dte/engine buildDocument (what the signer serializes) */
  @Column({ name: 'document', type: 'jsonb' })
  document!: Record<string, unknown>;

  @Column({ name: 'signed_xml', type: 'text', nullable: true })
  signedXml!: string | null;

  @Column({ name: 'signed_at', type: 'timestamptz', nullable: true })
  signedAt!: Date | null;

  /** the SII track id (digits) once uploaded */
  @Column({ name: 'track_id', type: 'text', nullable: true })
  trackId!: string | null;

  @Column({ name: 'upload_id', type: 'uuid', nullable: true })
  uploadId!: string | null;

  @Column({ name: 'sii_status', type: 'text', default: 'queued' })
  siiStatus!: string;

  @Column({ name: 'sii_glosa', type: 'text', nullable: true })
  siiGlosa!: string | null;

  /** observed_at of the status change the row shows (the no-going-backwards clock) */
  @Column({ name: 'observed_at', type: 'timestamptz' })
  observedAt!: Date;

  @Column({ name: 'sii_last_polled', type: 'timestamptz', nullable: true })
  siiLastPolled!: Date | null;

  /** X-Request-Id of the POST that issued it (log correlation; the workers pass it on as x-request-id) */
  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId!: string | null;

  /** reclamado, aceptado, en_plazo, aceptado_tacito, sin_info */
  @Column({ name: 'receptor_estado', type: 'text', default: 'sin_info' })
  receptorEstado!: string;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey!: string;

  /** sha256 hex of the canonical JSON of the body */
  @Column({ name: 'body_hash', type: 'text' })
  bodyHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
