/**
 * Taxpayer situation of a RUT (situación tributaria de terceros). The real SII publishes it only
 * as a captcha-protected web page, so this client speaks the SII simulator's JSON stand-in
 * (packages/sii-simulator, routes/taxpayers.ts):
 *
 *   GET {root}/contribuyentes/{rut}/situacion → {rut, razonSocial, estado, inicioActividades}
 *
 * `root` is the simulator's root (SII_BASE_URL, without /cert or /prod: the register is one).
 * Answers: the situation; throws SituacionError `rate_limit` (429, with retryAfterSeconds) or
 * `unavailable` (network, timeout, 5xx, anything unexpected).
 */
export type SituacionEstado = 'activo' | 'sin_inicio_actividades' | 'rut_inexistente';

export interface SituacionTributaria {
  rut: string;
  razonSocial: string | null;
  estado: SituacionEstado;
  inicioActividades: string | null;
}

export class SituacionError extends Error {
  constructor(
    readonly kind: 'rate_limit' | 'unavailable',
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'SituacionError';
  }
}

const ESTADOS: SituacionEstado[] = ['activo', 'sin_inicio_actividades', 'rut_inexistente'];

export async function consultarSituacionTributaria(
  root: string,
  rut: string,
  opts: { timeoutMs?: number } = {},
): Promise<SituacionTributaria> {
  const url = `${root.replace(/\/+$/, '')}/contribuyentes/${encodeURIComponent(rut)}/situacion`;
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
  } catch (err) {
    throw new SituacionError('unavailable', `situacion tributaria: ${(err as Error).message}`);
  }
  if (res.status === 429) {
    const after = Number(res.headers.get('retry-after'));
    throw new SituacionError('rate_limit', 'situacion tributaria: too many queries', after > 0 ? after : 60);
  }
  if (!res.ok) throw new SituacionError('unavailable', `situacion tributaria: HTTP ${res.status}`);
  const body = (await res.json().catch(() => null)) as Partial<SituacionTributaria> | null;
  if (!body || !ESTADOS.includes(body.estado as SituacionEstado)) {
    throw new SituacionError('unavailable', 'situacion tributaria: unexpected answer');
  }
  return {
    rut: String(body.rut ?? rut),
    razonSocial: body.razonSocial ?? null,
    estado: body.estado as SituacionEstado,
    inicioActividades: body.inicioActividades ?? null,
  };
}
