import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Emission pipeline: issued documents (read model), the transactional outbox and the events feed. */
export class DtePipeline1763800000000 implements MigrationInterface {
  name = 'DtePipeline1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE dtes (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        tipo_dte integer NOT NULL,
        folio bigint NOT NULL,
        caf_id uuid NOT NULL REFERENCES cafs(id),
        certificate_id uuid NOT NULL REFERENCES certificates(id),
        rut_emisor text NOT NULL,
        rut_receptor text,
        razon_social_receptor text NOT NULL,
        fecha_emision date NOT NULL,
        monto_neto bigint NOT NULL DEFAULT 0,
        monto_exento bigint NOT NULL DEFAULT 0,
        iva bigint NOT NULL DEFAULT 0,
        monto_total bigint NOT NULL DEFAULT 0,
        input jsonb NOT NULL,
        document jsonb NOT NULL,
        signed_xml text,
        signed_at timestamptz,
        track_id text,
        upload_id uuid,
        sii_status text NOT NULL DEFAULT 'queued',
        sii_glosa text,
        observed_at timestamptz NOT NULL DEFAULT now(),
        sii_last_polled timestamptz,
        receptor_estado text NOT NULL DEFAULT 'sin_info',
        idempotency_key text NOT NULL,
        body_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT dtes_org_env_tipo_folio_uq UNIQUE (organization_id, sii_env, tipo_dte, folio),
        CONSTRAINT dtes_org_idempotency_key_uq UNIQUE (organization_id, idempotency_key)
      )`);
    await q.query(`CREATE INDEX dtes_org_created_idx ON dtes (organization_id, created_at, id)`);
    await q.query(`CREATE INDEX dtes_upload_idx ON dtes (upload_id) WHERE upload_id IS NOT NULL`);
    await q.query(`
      CREATE TABLE outbox (
        id bigserial PRIMARY KEY,
        topic text NOT NULL,
        schema text NOT NULL,
        message_key text,
        payload jsonb NOT NULL,
        event_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        published_at timestamptz,
        attempts integer NOT NULL DEFAULT 0,
        CONSTRAINT outbox_event_id_uq UNIQUE (event_id)
      )`);
    await q.query(`CREATE INDEX outbox_unpublished_idx ON outbox (id) WHERE published_at IS NULL`);
    // wakes the relay (LISTEN outbox); the relay still polls, so a lost notification only delays
    await q.query(`
      CREATE FUNCTION outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('outbox', '');
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE TRIGGER outbox_notify_trg AFTER INSERT ON outbox
      FOR EACH STATEMENT EXECUTE FUNCTION outbox_notify()`);
    await q.query(`
      CREATE TABLE dte_events (
        id bigserial PRIMARY KEY,
        dte_id uuid NOT NULL REFERENCES dtes(id),
        event_id text NOT NULL,
        sii_status text NOT NULL,
        glosa text,
        track_id text,
        source text NOT NULL,
        observed_at timestamptz NOT NULL,
        recorded_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT dte_events_event_id_uq UNIQUE (event_id)
      )`);
    await q.query(`CREATE INDEX dte_events_dte_idx ON dte_events (dte_id, observed_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE dte_events`);
    await q.query(`DROP TABLE outbox`);
    await q.query(`DROP FUNCTION outbox_notify()`);
    await q.query(`DROP TABLE dtes`);
  }
}
