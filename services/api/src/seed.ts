/**
 * Seed command: creates (or reuses) an organization and its company, and a new API key, and
 * prints the key. The local start uses it to seed a demo.
 *
 *   npm run -s seed -w @dte/api -- --org "Demo SpA" --rut 76086428-5 --env cert \
 *     [--razon-social "DEMO SPA"] [--giro ...] [--direccion ...] [--comuna ...] [--actividad 620200] \
 *     [--signer-rut 11111111-1,...] [--scopes dte:read,dte:write,...] [--expires-days 90] \
 *     [--owner-email a@b.cl [--owner-password …]] [--resolucion-numero 0 --resolucion-fecha 2024-01-01] [--sii-oficina "SANTIAGO ORIENTE"]
 *     [--branch "Casa Matriz|Av. Uno 1|Santiago|12345"]... [--print json|key]
 *     [--prod-enabled] [--prod-tipos 33,34,56,61]
 *
 * --prod-enabled opens the organization's production gate (it may issue in production at all);
 * --prod-tipos opens it too and adds those document types to the ones the company is certified
 * to issue in production (see @dte/tenancy production-gates.ts). Neither is ever closed by this command.
 *
 * Prints one JSON line {organization_id, company_id, environment, api_key, scopes[, user_id]}
 * (or only the key with --print key). With --owner-email it also creates that user as owner;
 * with --owner-password (or OWNER_PASSWORD) too, that user can sign in to the dashboard
 * (POST /auth/login); the password is stored as an scrypt hash (@dte/accounts). Without a
 * password the owner is invited: the JSON carries `invitation_token` (7 days, one use), which
 * POST /auth/invitacion takes with the password the owner chooses.
 */
import { parseArgs } from 'node:util';
import { DTE_ENDPOINT_TIPOS, type TipoDte } from '@dte/engine';
import type { DataSource } from 'typeorm';
import { generateApiKey } from './auth/api-key-format';
import { SCOPES, isScope, type Scope, type SiiEnv, normalizeRut } from '@dte/tenancy';
import { hashPassword, issueUserToken } from '@dte/accounts';
import { openApiDatabase } from './db/data-source';

export interface SeedInput {
  org: string;
  rut: string;
  env: SiiEnv;
  razonSocial?: string;
  giro?: string;
  direccion?: string;
  comuna?: string;
  actividadEconomica?: number;
  signerRuts?: string[];
  scopes?: Scope[];
  expiresAt?: Date | null;
  ownerEmail?: string;
  /** the dashboard password of ownerEmail (set or replaced) */
  ownerPassword?: string;
  /** the role of ownerEmail (owner by default) */
  ownerRole?: 'owner' | 'admin' | 'member';
  /** SII resolution authorizing the company in `env` */
  resolucion?: { numero: number; fecha: string };
  /** the SII unit of the company's domicile (printed form: "S.I.I. - <oficina>") */
  siiOficina?: string;
  branches?: { nombre: string; direccion: string; comuna: string; codigoSii?: number }[];
  /** enable the organization to issue in production */
  prodEnabled?: boolean;
  /** document types the company is certified to issue in production (added; implies prodEnabled) */
  prodTipos?: number[];
}

export interface SeedResult {
  organization_id: string;
  company_id: string;
  environment: SiiEnv;
  api_key: string;
  api_key_id: string;
  scopes: Scope[];
  user_id?: string;
  /** an owner without a password: the one-use token that sets it (POST /auth/invitacion) */
  invitation_token?: string;
  invitation_expires_at?: string;
}

/**
 * Creates or reuses the organization (by name) and company (by RUT), then a fresh API key. A reused
 * company keeps its signer RUTs and gains the ones given (none given: unchanged, never null).
 */
export async function seedOrganization(db: DataSource, input: SeedInput): Promise<SeedResult> {
  const rut = normalizeRut(input.rut);
  if (!rut) throw new Error(`--rut ${input.rut} is not a valid RUT`);
  const signerRuts = (input.signerRuts ?? []).map((r) => {
    const n = normalizeRut(r);
    if (!n) throw new Error(`--signer-rut ${r} is not a valid RUT`);
    return n;
  });
  const scopes = input.scopes ?? [...SCOPES];
  const passwordHash = input.ownerPassword ? await hashPassword(input.ownerPassword) : null;
  return db.transaction(async (m) => {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`seed:${input.org}`]);
    let org: { id: string }[] = await m.query(
      'SELECT id FROM organizations WHERE name = $1 ORDER BY created_at LIMIT 1',
      [input.org],
    );
    if (!org[0])
      org = await m.query('INSERT INTO organizations (name) VALUES ($1) RETURNING id', [input.org]);
    const organizationId = org[0].id;
    // the organization's onboarding RUT, unless another organization holds it already
    await m.query(
      `UPDATE organizations SET rut = $2 WHERE id = $1 AND rut IS NULL
          AND NOT EXISTS (SELECT 1 FROM organizations WHERE rut = $2)`,
      [organizationId, rut],
    );
    const company: { id: string }[] = await m.query(
      `INSERT INTO companies (organization_id, rut, razon_social, giro, direccion, comuna, actividad_economica, signer_ruts)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (organization_id, rut) DO UPDATE
         SET signer_ruts = ARRAY(
           SELECT DISTINCT x FROM unnest(companies.signer_ruts || EXCLUDED.signer_ruts) x ORDER BY x)
       RETURNING id`,
      [
        organizationId,
        rut,
        input.razonSocial ?? input.org.toUpperCase(),
        input.giro ?? null,
        input.direccion ?? null,
        input.comuna ?? null,
        input.actividadEconomica ?? null,
        signerRuts,
      ],
    );
    if (input.prodEnabled || input.prodTipos?.length) {
      await m.query('UPDATE organizations SET prod_enabled = true WHERE id = $1', [organizationId]);
    }
    if (input.prodTipos?.length) {
      await m.query(
        `UPDATE companies SET prod_tipos = ARRAY(
           SELECT DISTINCT x FROM unnest(prod_tipos || $2::integer[]) x ORDER BY x) WHERE id = $1`,
        [company[0].id, input.prodTipos],
      );
    }
    if (input.resolucion) {
      await m.query(
        `UPDATE companies SET resolucion_${input.env}_numero = $2, resolucion_${input.env}_fecha = $3 WHERE id = $1`,
        [company[0].id, input.resolucion.numero, input.resolucion.fecha],
      );
    }
    if (input.siiOficina) {
      await m.query('UPDATE companies SET sii_oficina = $2 WHERE id = $1', [company[0].id, input.siiOficina]);
    }
    for (const b of input.branches ?? []) {
      await m.query(
        `INSERT INTO branches (company_id, nombre, direccion, comuna, codigo_sii)
         SELECT $1, $2, $3, $4, $5
          WHERE NOT EXISTS (SELECT 1 FROM branches WHERE company_id = $1 AND nombre = $2 AND closed_at IS NULL)`,
        [company[0].id, b.nombre, b.direccion, b.comuna, b.codigoSii ?? null],
      );
    }
    const key = generateApiKey(input.env);
    const keyRow: { id: string }[] = await m.query(
      `INSERT INTO api_keys (organization_id, company_id, environment, name, prefix, key_hash, scopes, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
      [
        organizationId,
        company[0].id,
        input.env,
        `seed ${new Date().toISOString()}`,
        key.prefix,
        key.hash,
        scopes,
        input.expiresAt ?? null,
      ],
    );
    const result: SeedResult = {
      organization_id: organizationId,
      company_id: company[0].id,
      environment: input.env,
      api_key: key.key,
      api_key_id: keyRow[0].id,
      scopes,
    };
    if (input.ownerEmail) {
      const user: { id: string; has_password: boolean }[] = await m.query(
        `INSERT INTO users (email, password_hash) VALUES (lower($1), $2) ON CONFLICT (email)
         DO UPDATE SET password_hash = COALESCE(EXCLUDED.password_hash, users.password_hash)
         RETURNING id, password_hash IS NOT NULL AS has_password`,
        [input.ownerEmail, passwordHash],
      );
      await m.query(
        `INSERT INTO memberships (user_id, organization_id, role) VALUES ($1, $2, $3)
         ON CONFLICT (user_id, organization_id) DO UPDATE SET role = EXCLUDED.role`,
        [user[0].id, organizationId, input.ownerRole ?? 'owner'],
      );
      result.user_id = user[0].id;
      // without a password the owner is invited: only the token's holder sets it (no one claims
      // the address by signing up first with it)
      if (!user[0].has_password) {
        const inv = await issueUserToken(m, user[0].id, 'invitation', new Date());
        result.invitation_token = inv.token;
        result.invitation_expires_at = inv.expiresAt.toISOString();
      }
    }
    return result;
  });
}

async function cli(): Promise<void> {
  const { values } = parseArgs({
    options: {
      org: { type: 'string' },
      rut: { type: 'string' },
      env: { type: 'string', default: 'cert' },
      'razon-social': { type: 'string' },
      giro: { type: 'string' },
      direccion: { type: 'string' },
      comuna: { type: 'string' },
      actividad: { type: 'string' },
      'signer-rut': { type: 'string' },
      scopes: { type: 'string' },
      'expires-days': { type: 'string' },
      'owner-email': { type: 'string' },
      'owner-password': { type: 'string' },
      'resolucion-numero': { type: 'string' },
      'resolucion-fecha': { type: 'string' },
      'sii-oficina': { type: 'string' },
      branch: { type: 'string', multiple: true },
      'prod-enabled': { type: 'boolean' },
      'prod-tipos': { type: 'string' },
      print: { type: 'string', default: 'json' },
    },
  });
  if (!values.org || !values.rut)
    throw new Error('usage: seed --org <name> --rut <12345678-5> [--env cert|prod] …');
  if (values.env !== 'cert' && values.env !== 'prod') throw new Error('--env must be cert or prod');
  const scopes = values.scopes?.split(',').map((s) => s.trim());
  const bad = scopes?.filter((s) => !isScope(s));
  if (bad?.length) throw new Error(`unknown scopes: ${bad.join(', ')} (known: ${SCOPES.join(', ')})`);
  const resNum = values['resolucion-numero'];
  const resFecha = values['resolucion-fecha'];
  if (
    (resNum === undefined) !== (resFecha === undefined) ||
    (resNum && !/^\d{1,6}$/.test(resNum)) ||
    (resFecha && !/^\d{4}-\d{2}-\d{2}$/.test(resFecha))
  ) {
    throw new Error('--resolucion-numero N and --resolucion-fecha YYYY-MM-DD go together');
  }
  const branches = (values.branch ?? []).map((spec) => {
    const [nombre, direccion, comuna, codigo] = spec.split('|').map((x) => x.trim());
    if (!nombre || !direccion || !comuna || (codigo && !/^\d{1,9}$/.test(codigo))) {
      throw new Error(`--branch "${spec}" must be "nombre|direccion|comuna[|codigo_sii]"`);
    }
    return { nombre, direccion, comuna, ...(codigo ? { codigoSii: Number(codigo) } : {}) };
  });
  const prodTipos = values['prod-tipos']?.split(',').map((x) => Number(x.trim()));
  const unknownTipos = prodTipos?.filter((t) => !DTE_ENDPOINT_TIPOS.includes(t as TipoDte));
  if (unknownTipos?.length) {
    throw new Error(
      `--prod-tipos: ${unknownTipos.join(', ')} not issued here (${DTE_ENDPOINT_TIPOS.join(', ')})`,
    );
  }
  const url = process.env.DATABASE_URL ?? 'postgres://dte:dte@127.0.0.1:15432/dte';
  const db = await openApiDatabase({ url, schema: process.env.DATABASE_SCHEMA || undefined, poolSize: 2 });
  try {
    const res = await seedOrganization(db, {
      org: values.org,
      rut: values.rut,
      env: values.env,
      razonSocial: values['razon-social'],
      giro: values.giro,
      direccion: values.direccion,
      comuna: values.comuna,
      actividadEconomica: values.actividad ? Number(values.actividad) : undefined,
      signerRuts: values['signer-rut']?.split(','),
      scopes: scopes as Scope[] | undefined,
      expiresAt: values['expires-days']
        ? new Date(Date.now() + Number(values['expires-days']) * 86400_000)
        : null,
      ownerEmail: values['owner-email'],
      ownerPassword: values['owner-password'] ?? process.env.OWNER_PASSWORD,
      resolucion: resNum && resFecha ? { numero: Number(resNum), fecha: resFecha } : undefined,
      branches,
      ...(values['sii-oficina'] ? { siiOficina: values['sii-oficina'] } : {}),
      prodEnabled: values['prod-enabled'],
      prodTipos,
    });
    const out: Record<string, unknown> = { ...res };
    process.stdout.write(values.print === 'key' ? `${res.api_key}\n` : `${JSON.stringify(out)}\n`);
  } finally {
    await db.destroy();
  }
}

if (require.main === module) {
  cli().catch((err) => {
    console.error(`seed failed: ${(err as Error).message}`);
    process.exit(1);
  });
}
