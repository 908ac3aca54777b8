import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The register's own fields on `rcv_documents` (issue 29), as the SII's RCV rows give them:
 * the other party's name, non-recoverable VAT and its code, VAT of common use, fixed assets,
 * amounts without credit right, other taxes (total, code, rate), the purchase type, and the
 * acceptance and claim date-times. `sii_estado` gains `not_included` (the register's NO_INCLUIR)
 * on both the register and the inbox, so such a document is never shown as registered.
 */
export class RcvRegisterFields1796300100000 implements MigrationInterface {
  name = 'RcvRegisterFields1796300100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE rcv_documents
        ADD COLUMN razon_social text,
        ADD COLUMN iva_no_recuperable bigint NOT NULL DEFAULT 0,
        ADD COLUMN cod_iva_no_recuperable integer,
        ADD COLUMN iva_uso_comun bigint NOT NULL DEFAULT 0,
        ADD COLUMN mnt_activo_fijo bigint NOT NULL DEFAULT 0,
        ADD COLUMN iva_activo_fijo bigint NOT NULL DEFAULT 0,
        ADD COLUMN mnt_sin_credito bigint NOT NULL DEFAULT 0,
        ADD COLUMN otros_impuestos bigint NOT NULL DEFAULT 0,
        ADD COLUMN cod_otro_impuesto integer,
        ADD COLUMN tasa_otro_impuesto numeric,
        ADD COLUMN tipo_compra integer,
        ADD COLUMN fecha_acuse timestamptz,
        ADD COLUMN fecha_reclamo timestamptz`);
    for (const table of ['rcv_documents', 'recepcion_documentos']) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_sii_estado_check`);
      await q.query(
        `ALTER TABLE ${table} ADD CONSTRAINT ${table}_sii_estado_check
           CHECK (sii_estado IN ('registered', 'pending', 'claimed', 'accepted', 'not_included'))`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of ['rcv_documents', 'recepcion_documentos']) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${table}_sii_estado_check`);
      await q.query(
        `ALTER TABLE ${table} ADD CONSTRAINT ${table}_sii_estado_check
           CHECK (sii_estado IN ('registered', 'pending', 'claimed', 'accepted'))`,
      );
    }
    await q.query(`
      ALTER TABLE rcv_documents
        DROP COLUMN razon_social, DROP COLUMN iva_no_recuperable, DROP COLUMN cod_iva_no_recuperable,
        DROP COLUMN iva_uso_comun, DROP COLUMN mnt_activo_fijo, DROP COLUMN iva_activo_fijo,
        DROP COLUMN mnt_sin_credito, DROP COLUMN otros_impuestos, DROP COLUMN cod_otro_impuesto,
        DROP COLUMN tasa_otro_impuesto, DROP COLUMN tipo_compra, DROP COLUMN fecha_acuse, DROP COLUMN fecha_reclamo`);
  }
}
