// @ts-check
// The api's errors in the user's words: a sentence per code the dashboard meets, the api's own
// message otherwise. The code itself is not shown (it is in the api's answer for support).
import { entero } from './format.js';

/** @type {Record<string, string>} */
const MENSAJES = {
  unauthorized: 'Correo o contraseña incorrectos, o la sesión expiró.',
  rate_limit: 'Demasiados intentos. Espere antes de reintentar.',
  forbidden: 'Su rol no permite esta acción; pida ayuda a un dueño o administrador.',
  'empresa.conflict': 'Esa empresa ya está registrada: solicite acceso a sus dueños.',
  'situacion_tributaria.bloqueada': 'El SII no permite registrar este RUT',
  validation_failed: 'Revise los datos del formulario.',
  validation_error: 'Revise los datos del formulario.',
  csrf_origin_mismatch: 'Solicitud bloqueada por seguridad (origen distinto).',
  csrf_blocked: 'Solicitud bloqueada por seguridad.',
  'billing.free_tier_exceeded': 'Se alcanzó el límite mensual de documentos de su plan.',
  invalid_webhook_url:
    'La dirección debe ser https y pública: no se aceptan direcciones internas ni locales.',
};

/** @type {Record<string, string>} */
const SITUACION = {
  rut_inexistente: 'el RUT no existe en el SII',
  sin_inicio_actividades: 'el RUT no tiene inicio de actividades',
};

/**
 * The sentence of a failed call.
 * @param {import('./api.js').ApiResult} res
 */
export function describe(res) {
  const b = res.body || {};
  const d = b.detail || {};
  let text =
    b.code === 'billing.free_tier_exceeded' && d.limit !== undefined
      ? `Se alcanzó el límite mensual de documentos de su plan (${entero(d.usedThisMonth)} de ${entero(d.limit)}).`
      : MENSAJES[b.code] || b.message || `Error ${res.status}`;
  const estado = b.estado ?? d.estado;
  if (b.code === 'situacion_tributaria.bloqueada' && estado) text += `: ${SITUACION[estado] || estado}.`;
  /** @type {{ path?: string, message?: string }[]} */
  const issues = b.issues || b.errors || [];
  if (issues.length) text += ' ' + issues.map((i) => `${i.path ? `${i.path}: ` : ''}${i.message}`).join('; ');
  return text;
}
