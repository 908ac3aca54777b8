import { type BacklogGate, bodyHash } from '@dte/emission';
import { randomUUID } from 'node:crypto';
import { classify } from '@dte/status';
import { isServiceError, ApiError } from '@dte/error-catalog';
import type { BoletaInput } from '@dte/engine';
import type { DataSource } from 'typeorm';
import type { Principal } from '@dte/tenancy';
import { isUuid } from '@dte/database';
import { validateBody } from '@dte/http-contract';
import { checkBoletaFor, checkSiiEnv, insertBoletas, loadIssuer } from './emission';

/** The spec's limits of a batch: 1-1000 boletas, batch_idempotency_key 1-128 characters. */
export const MAX_BATCH = 1000;
export const MAX_BATCH_KEY = 128;

interface BatchError {
  index: number;
  position?: number;
  code: string;
  message: string;
  path?: string;
}

/**
 * The spec's `path` of an entry's error: `boletas[i]` and, when the rule names the field, the
 * field inside the entry (`boletas[2].items[0].monto_item`; a JSON Schema issue's path comes as
 * `/items/0` or `items[0]`).
 */
function entryPath(index: number, field: unknown): string {
  const base = `boletas[${index}]`;
  if (typeof field !== 'string' || field === '' || field === '/') return base;
  const dotted = field
    .replace(/^\//, '')
    .split('/')
    .map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`))
    .join('')
    .replace(/^\./, '');
  return `${base}${dotted.startsWith('[') ? '' : '.'}${dotted}`;
}

function validationError(errors: BatchError[]): ApiError {
  return new ApiError(
    'validation_error',
    `The batch has ${errors.length} invalid entries; nothing was issued.`,
    // the spec: errors[] in the body (detail keeps it too)
    { detail: { errors }, bodyFields: { errors } },
  );
}

/**
 * POST /boletas/batch. Idempotency is in the body: the same batch_idempotency_key and body answer
 * the same batch; another body under the key is boleta.batch.idempotency_conflict. Over 1000
 * boletas is boleta.batch.exceeds_max; any invalid entry (shape, rules, a repeated `position`)
 * rejects the whole batch with validation_error and errors[] (nothing issued, no folio used).
 * Otherwise ONE transaction takes a folio per boleta and writes them all, each under the key
 * `batch:<batchId>:<position>` and the unique (batch_id, batch_position): a position is issued
 * once per batch. The pipeline then processes them like single boletas.
 */
export async function submitBatch(
  db: DataSource,
  principal: Principal,
  body: unknown,
  certIdHeader: string | undefined,
  now: Date,
  opts: { backlog?: BacklogGate; requestId?: string } = {},
): Promise<{ batchId: string; queued: number }> {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const key = b.batch_idempotency_key;
  if (typeof key !== 'string' || key.length < 1 || key.length > MAX_BATCH_KEY)
    throw validationError([
      {
        index: -1,
        code: 'batch_idempotency_key',
        path: 'batch_idempotency_key',
        message: `required string of 1-${MAX_BATCH_KEY} characters`,
      },
    ]);
  const items = b.boletas;
  if (!Array.isArray(items) || items.length === 0)
    throw validationError([
      { index: -1, code: 'boletas', path: 'boletas', message: 'required array of 1-1000 boletas' },
    ]);
  if (items.length > MAX_BATCH)
    throw new ApiError('boleta.batch.exceeds_max', `A batch holds at most ${MAX_BATCH} boletas; split it.`, {
      detail: { max: MAX_BATCH, count: items.length },
    });
  if (!principal.companyId) throw new ApiError('forbidden', 'Emission needs an API key of a company.');
  const hash = bodyHash(body);
  const existing = await findBatchByKey(db, principal, key);
  if (existing) return replay(existing, hash);

  const issuer = await loadIssuer(db, principal, certIdHeader, now);
  const errors: BatchError[] = [];
  const seen = new Map<number, number>();
  const entries: { input: BoletaInput; position: number; raw: unknown }[] = [];
  items.forEach((raw, index) => {
    const copy = raw && typeof raw === 'object' ? { ...(raw as Record<string, unknown>) } : raw;
    let position = index;
    if (copy && typeof copy === 'object' && 'position' in copy) {
      const p = (copy as Record<string, unknown>).position;
      delete (copy as Record<string, unknown>).position;
      if (!Number.isInteger(p) || (p as number) < 0 || (p as number) >= MAX_BATCH) {
        errors.push({
          index,
          code: 'position_invalid',
          path: `boletas[${index}].position`,
          message: 'integer 0-999',
        });
        return;
      }
      position = p as number;
    }
    const first = seen.get(position);
    if (first !== undefined) {
      errors.push({
        index,
        position,
        code: 'position_repeated',
        path: `boletas[${index}].position`,
        message: `position ${position} is already used by boletas[${first}]`,
      });
      return;
    }
    seen.set(position, index);
    try {
      const input = validateBody<BoletaInput>('boleta-emission.schema.json', copy);
      checkSiiEnv(principal, input);
      checkBoletaFor(issuer, input, now);
      entries.push({ input, position, raw: copy });
    } catch (err) {
      if (!isServiceError(err)) throw err;
      const issues = (err as { issues?: { path: string; message: string }[] }).issues;
      errors.push({
        index,
        position,
        code: err.code,
        path: entryPath(index, issues?.[0]?.path ?? (err.detail as { field?: unknown } | undefined)?.field),
        message: issues?.length ? issues.map((i) => `${i.path} ${i.message}`).join('; ') : err.message,
        ...(err.detail ? { detail: err.detail } : {}),
      } as BatchError);
    }
  });
  if (errors.length > 0) throw validationError(errors);
  // backpressure: the whole batch must fit under the company's unsent backlog bound
  await opts.backlog?.admit(
    db,
    { companyId: principal.companyId, environment: principal.environment },
    entries.length,
  );

  return db.transaction(async (m) => {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
      `boleta-batch:${principal.companyId}:${principal.environment}:${key}`,
    ]);
    const raced = await findBatchByKey(m as unknown as DataSource, principal, key);
    if (raced) return replay(raced, hash);
    const batchId = randomUUID();
    await m.query(
      `INSERT INTO boleta_batches (id, organization_id, company_id, sii_env, idempotency_key, body_hash, total, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        batchId,
        principal.organizationId,
        issuer.company.id,
        principal.environment,
        key,
        hash,
        entries.length,
        now,
      ],
    );
    await insertBoletas(
      m,
      issuer,
      entries.map((e) => ({
        input: e.input,
        rec: {
          idempotencyKey: `batch:${batchId}:${e.position}`,
          bodyHash: bodyHash(e.raw),
          body: e.raw,
          batch: { id: batchId, position: e.position },
          requestId: opts.requestId,
        },
      })),
      now,
    );
    return { batchId, queued: entries.length };
  });
}

interface BatchRow {
  id: string;
  body_hash: string;
  total: number;
  created_at: Date;
}

/** The batch_idempotency_key belongs to one company (issue 28), as its boletas do. */
async function findBatchByKey(db: Pick<DataSource, 'query'>, principal: Principal, key: string) {
  const rows: BatchRow[] = await db.query(
    `SELECT id, body_hash, total, created_at FROM boleta_batches
      WHERE organization_id = $1 AND company_id = $2 AND sii_env = $3 AND idempotency_key = $4`,
    [principal.organizationId, principal.companyId, principal.environment, key],
  );
  return rows[0];
}

function replay(b: BatchRow, hash: string): { batchId: string; queued: number } {
  if (b.body_hash !== hash)
    throw new ApiError(
      'boleta.batch.idempotency_conflict',
      'This batch_idempotency_key already submitted a batch with another body.',
      { detail: { batchId: b.id } },
    );
  return { batchId: b.id, queued: b.total };
}

/**
 * GET /boletas/batch/:id: the counters from the boletas' own sii_status (the dte-status
 * classification): queued = not yet sent (queued, signed); sending = at the SII without a verdict;
 * done = accepted (categoria aceptado); failed = rejected or needing action. status is
 * `processing` while any is queued or sending, then `completed` (completedAt = the last verdict).
 */
export async function batchStatus(
  db: DataSource,
  scope: { organizationId: string; environment: string; companyId: string | null },
  id: string,
) {
  const notFound = () => new ApiError('boleta.batch.not_found', 'No such batch.');
  if (!isUuid(id)) throw notFound();
  const batches: BatchRow[] = await db.query(
    `SELECT id, body_hash, total, created_at FROM boleta_batches
      WHERE id = $1 AND organization_id = $2 AND sii_env = $3 AND ($4::uuid IS NULL OR company_id = $4)`,
    [id, scope.organizationId, scope.environment, scope.companyId],
  );
  const batch = batches[0];
  if (!batch) throw notFound();
  const rows: { sii_status: string; n: number; last: Date }[] = await db.query(
    `SELECT sii_status, count(*)::int AS n, max(observed_at) AS last FROM dtes WHERE batch_id = $1 GROUP BY sii_status`,
    [id],
  );
  let queued = 0;
  let sending = 0;
  let done = 0;
  let failed = 0;
  let last = 0;
  for (const r of rows) {
    const c = classify(r.sii_status);
    last = Math.max(last, new Date(r.last).getTime());
    if (r.sii_status === 'queued' || r.sii_status === 'signed') queued += r.n;
    else if (c.categoria === 'aceptado' || c.categoria === 'archivistico') done += r.n;
    else if (c.categoria === 'rechazado' || c.categoria === 'requiere_accion') failed += r.n;
    else sending += r.n;
  }
  const processing = queued + sending > 0;
  return {
    batchId: batch.id,
    status: processing ? 'processing' : 'completed',
    total: batch.total,
    queued,
    sending,
    done,
    failed,
    createdAt: new Date(batch.created_at).toISOString(),
    completedAt: processing ? null : new Date(last).toISOString(),
  };
}
