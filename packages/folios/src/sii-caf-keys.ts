/**
 * The SII's public keys that sign CAFs (the FRMA over the DA), per environment and IDK, from
 * configuration: SII_CAF_KEYS_FILE names a JSON file
 *
 *   { "cert": { "idk": 100, "certificatePem": "…" }, "prod": [{ "idk": 300, "publicKeyPem": "…" }] }
 *
 * (an entry holds `publicKeyPem` or `certificatePem`; the SII simulator's keys file,
 * SII_SIMULATOR_KEYS_FILE, has this shape). A CAF is accepted only when its FRMA verifies with
 * the key configured for its IDK in its environment: a forged or re-signed range is refused before
 * any folio of it exists.
 */
import { readFileSync } from 'node:fs';

import { verifyCafSignature, type Caf } from '@dte/engine';

import { ApiError } from '@dte/error-catalog';

export type SiiCafKeys = Partial<Record<'cert' | 'prod', { idk: number; pem: string }[]>>;

/** Reads and checks SII_CAF_KEYS_FILE (throws on a malformed file: start-up fails). */
export function loadSiiCafKeys(file: string): SiiCafKeys {
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  const out: SiiCafKeys = {};
  for (const env of ['cert', 'prod'] as const) {
    const v = raw[env];
    if (v === undefined || v === null) continue;
    out[env] = (Array.isArray(v) ? v : [v]).map(
      (k: { idk?: unknown; publicKeyPem?: unknown; certificatePem?: unknown }) => {
        const pem = typeof k.publicKeyPem === 'string' ? k.publicKeyPem : k.certificatePem;
        if (typeof k.idk !== 'number' || typeof pem !== 'string') {
          throw new Error(`${file}: each ${env} key needs a numeric idk and publicKeyPem or certificatePem`);
        }
        return { idk: k.idk, pem };
      },
    );
  }
  return out;
}

/**
 * Refuses (422 caf.parse_error: the spec's code for a CAF that is not a valid SII CAF) a CAF whose
 * FRMA does not verify with the configured SII key of its IDK, or whose IDK has no key.
 */
export function assertCafSignedBySii(caf: Caf, environment: 'cert' | 'prod', keys: SiiCafKeys): void {
  const key = (keys[environment] ?? []).find((k) => k.idk === caf.idk);
  if (!key) {
    throw new ApiError(
      'caf.parse_error',
      `No SII key is configured for IDK ${caf.idk} (${environment}); the CAF cannot be verified.`,
      {
        detail: { idk: caf.idk, reason: 'sii_key_unknown' },
      },
    );
  }
  if (!verifyCafSignature(caf, key.pem)) {
    throw new ApiError(
      'caf.parse_error',
      `The CAF's SII signature (FRMA) does not verify with the SII key of IDK ${caf.idk}: it was not issued by the SII or was altered.`,
      {
        detail: { idk: caf.idk, reason: 'signature_invalid' },
      },
    );
  }
}
