import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `exchange_replies` (issue 29): the exchange replies the receiving company owes a supplier,
 * signed and stored as sent: `recepcion` (RespuestaDTE / RecepcionEnvio: the envelope and each
 * document's reception, written when a file is received), `resultado` (RespuestaDTE /
 * ResultadoDTE: the commercial approval, on ACD or a claim) and `recibo` (EnvioRecibos, the Ley
 * 19.983 receipt, on ERM). `documento_ids` are the inbox rows it answers; `cod_envio` the
 * receiver's number of the envelope (CodEnvio), repeated in later ResultadoDTE. The mail to the
 * supplier's exchange address is the row itself: pending until sent, retried with backoff until
 * failed; `sin_correo` when no address is known (downloadable, not mailed).
 */
export class ExchangeReplies1796300000000 implements MigrationInterface {
  name = 'ExchangeReplies1796300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE SEQUENCE exchange_reply_numbers START 1 MAXVALUE 9999999999`);
    await q.query(`
      CREATE TABLE exchange_replies (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id),
        company_id uuid NOT NULL REFERENCES companies(id),
        sii_env text NOT NULL CHECK (sii_env IN ('cert', 'prod')),
        kind text NOT NULL CHECK (kind IN ('recepcion', 'resultado', 'recibo')),
        numero bigint NOT NULL,
        cod_envio bigint,
        rut_destino text NOT NULL,
        documento_ids uuid[] NOT NULL DEFAULT '{}',
        xml bytea NOT NULL,
        correos text[] NOT NULL DEFAULT '{}' CHECK (cardinality(correos) <= 5),
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'sin_correo')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz,
        last_error text,
        message_id text,
        sent_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX exchange_replies_documentos ON exchange_replies USING gin (documento_ids)`);
    await q.query(
      `CREATE INDEX exchange_replies_due ON exchange_replies (next_attempt_at) WHERE state = 'pending'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE exchange_replies');
    await q.query('DROP SEQUENCE exchange_reply_numbers');
  }
}
