import type { RcvSource } from '@dte/reception';
import { StoredCredentials, type KeyWrapper } from '@dte/secrets';
import type { SiiClient } from '@dte/sii-client';
import type { DataSource } from 'typeorm';

/**
 * The SII side of a sync: the RCV read with the organization's signing certificate (the default
 * one, else the newest current one), opened only in memory, through a SiiSession (token cached
 * in Redis and renewed once when refused).
 */
export function siiRcvSource(db: DataSource, keys: KeyWrapper, sii: SiiClient): RcvSource {
  const credentials = new StoredCredentials({ db, keys, now: () => Date.now() });
  return {
    async read(q) {
      const [cert] = await db.query(
        `SELECT id FROM certificates
          WHERE organization_id = $1 AND deleted_at IS NULL AND not_after > now()
          ORDER BY is_default DESC, created_at DESC LIMIT 1`,
        [q.organizationId],
      );
      if (!cert)
        throw new Error(`organization ${q.organizationId} has no current certificate to read the RCV`);
      const credential = await credentials.get(cert.id);
      return sii
        .session(credential)
        .readRcv({ env: q.env, rutEmpresa: q.rut, operacion: q.operacion, periodo: q.periodo });
    },
  };
}
