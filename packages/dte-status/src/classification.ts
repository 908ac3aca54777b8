/**
 * The one classification table of sii_status (the spec's "EstadoDte block" and "sii_status
 * vocabulary"). sii_status itself is never changed; this only explains it. Unknown authority
 * codes (the SII may send codes such as 106 or 107) classify as en_proceso with accion
 * contactar_soporte and are never a success.
 */
export type Categoria = 'en_proceso' | 'aceptado' | 'rechazado' | 'requiere_accion' | 'archivistico';
export type Accion =
  'esperar' | 'reintentar_consulta' | 'reemitir' | 'contactar_soporte' | 'accion_en_sii' | 'ninguna';

export interface EstadoDte {
  code: string;
  label: string;
  descripcion: string;
  terminal: boolean;
  poll_activo: boolean;
  categoria: Categoria;
  accion: Accion;
}

type Row = Omit<EstadoDte, 'code'> & {
  /** position on the way to a verdict; a document never moves to a lower stage (see transitions.ts) */
  stage: number;
  /** deprecated members stay valid values of the vocabulary */
  deprecated?: boolean;
  /** outside the documented enum but named by the spec's webhook behaviour */
  outcome?: boolean;
  /**
   * an SII code outside the spec's enum that the SII gives as a final answer (the boleta REST
   * status's RCO, RPT, VOF): classified so it is final, kept out of the documented vocabulary
   */
  beyondSpec?: boolean;
};

/** Stages: 0 created, 1 signed, 2 uploading, 3 at the authority, 4 verdict. */
const TABLE: Record<string, Row> = {
  queued: row(
    'En cola',
    'El servicio recibió el documento; aún falta firmarlo y enviarlo al SII.',
    0,
    false,
    false,
    'en_proceso',
    'esperar',
  ),
  signed: row(
    'Firmado',
    'El documento está firmado y espera ser enviado al SII.',
    1,
    false,
    false,
    'en_proceso',
    'esperar',
  ),
  sending: row('Enviando', 'El documento se está enviando al SII.', 2, false, false, 'en_proceso', 'esperar'),
  awaiting_sii: {
    ...row(
      'Esperando al SII',
      'El envío espera la respuesta del SII.',
      3,
      false,
      true,
      'en_proceso',
      'esperar',
    ),
    deprecated: true,
  },
  '-11': row(
    'Procesando en el SII',
    'El SII aún no registra el envío; se sigue consultando.',
    3,
    false,
    true,
    'en_proceso',
    'esperar',
  ),
  REC: row('Recibido por el SII', 'El SII recibió el envío.', 3, false, true, 'en_proceso', 'esperar'),
  SOK: row(
    'Esquema validado',
    'El SII validó el esquema del envío.',
    3,
    false,
    true,
    'en_proceso',
    'esperar',
  ),
  CRT: row(
    'Carátula validada',
    'El SII validó la carátula del envío.',
    3,
    false,
    true,
    'en_proceso',
    'esperar',
  ),
  FOK: row('Firma validada', 'El SII validó la firma del envío.', 3, false, true, 'en_proceso', 'esperar'),
  PDR: row('En proceso', 'El SII está procesando el envío.', 3, false, true, 'en_proceso', 'esperar'),
  PRD: row('En proceso', 'El SII está procesando el envío.', 3, false, true, 'en_proceso', 'esperar'),
  EPR: row('Aceptado por el SII', 'El SII aceptó el documento.', 4, true, false, 'aceptado', 'ninguna'),
  RPR: row(
    'Aceptado por el SII con reparos',
    'El SII aceptó el documento con reparos.',
    4,
    true,
    false,
    'aceptado',
    'ninguna',
  ),
  aceptado_con_reparos: {
    ...row(
      'Aceptado por el SII con reparos',
      'El SII aceptó el documento con reparos.',
      4,
      true,
      false,
      'aceptado',
      'ninguna',
    ),
    deprecated: true,
  },
  accepted: row(
    'Aceptado (importado)',
    'Documento aceptado por el SII e importado desde su respaldo; no hay nada que consultar.',
    4,
    true,
    false,
    'archivistico',
    'ninguna',
  ),
  RFR: row(
    'Rechazado por firma',
    'El SII rechazó el envío por un error de firma.',
    4,
    true,
    false,
    'rechazado',
    'contactar_soporte',
  ),
  RCT: row(
    'Rechazado por carátula',
    'El SII rechazó el envío por un error en la carátula.',
    4,
    true,
    false,
    'rechazado',
    'contactar_soporte',
  ),
  RSC: row(
    'Rechazado por esquema',
    'El SII rechazó el envío por un error de esquema.',
    4,
    true,
    false,
    'rechazado',
    'contactar_soporte',
  ),
  // Final rejections of a whole send named by the boleta REST status (docs/boletas-bhe.md): the
  // SII's list of send states gives RCO as "rechazado por consistencia"; RPT and VOF are counted
  // as rejected by LibreDTE (their exact meaning is UNCONFIRMED, PROTOCOL.md §4). None of them
  // changes again: polling further would only end in stuck.
  RCO: {
    ...row(
      'Rechazado por consistencia',
      'El SII rechazó el envío completo por un error de consistencia; ninguna boleta del envío quedó aceptada.',
      4,
      true,
      false,
      'rechazado',
      'contactar_soporte',
    ),
    beyondSpec: true,
  },
  RPT: {
    ...row(
      'Envío rechazado (RPT)',
      'El SII rechazó el envío completo (estado RPT); ninguna boleta del envío quedó aceptada.',
      4,
      true,
      false,
      'rechazado',
      'contactar_soporte',
    ),
    beyondSpec: true,
  },
  VOF: {
    ...row(
      'Envío rechazado (VOF)',
      'El SII rechazó el envío completo (estado VOF); ninguna boleta del envío quedó aceptada.',
      4,
      true,
      false,
      'rechazado',
      'contactar_soporte',
    ),
    beyondSpec: true,
  },
  RCH: row(
    'Rechazado por el SII',
    'El SII rechazó el documento; el folio quedó usado. Emita un documento nuevo corregido, nunca una nota de crédito.',
    4,
    true,
    false,
    'rechazado',
    'reemitir',
  ),
  stuck: row(
    'Detenido',
    'No se pudo confirmar el veredicto del SII y nadie lo está consultando; pida una nueva consulta.',
    3,
    false,
    false,
    'requiere_accion',
    'reintentar_consulta',
  ),
  sin_permiso_sii: row(
    'Sin permiso en el SII',
    'El RUT del certificado no está habilitado para consultar el estado en el SII.',
    3,
    false,
    false,
    'requiere_accion',
    'accion_en_sii',
  ),
  emision_fallida: {
    ...row(
      'Emisión fallida',
      'No se pudo enviar el documento al SII.',
      2,
      false,
      false,
      'requiere_accion',
      'contactar_soporte',
    ),
    outcome: true,
  },
  envio_repetido: {
    ...row(
      'Envío repetido',
      'El SII informó el envío como repetido y no entregó un número de atención.',
      2,
      false,
      false,
      'requiere_accion',
      'contactar_soporte',
    ),
    outcome: true,
  },
};

function row(
  label: string,
  descripcion: string,
  stage: number,
  terminal: boolean,
  poll_activo: boolean,
  categoria: Categoria,
  accion: Accion,
): Row {
  return { label, descripcion, stage, terminal, poll_activo, categoria, accion };
}

const UNKNOWN: Omit<Row, 'label' | 'descripcion'> = {
  stage: 3,
  terminal: false,
  poll_activo: false,
  categoria: 'en_proceso',
  accion: 'contactar_soporte',
};

/** The documented sii_status vocabulary (deprecated members included), for filters and schemas. */
export const SII_STATUS_VOCABULARY: readonly string[] = Object.keys(TABLE).filter(
  (k) => !TABLE[k]!.outcome && !TABLE[k]!.beyondSpec,
);

/** Every status this service itself may set, vocabulary plus the requiere_accion outcomes. */
export const KNOWN_STATUSES: readonly string[] = Object.keys(TABLE);

export function isKnownStatus(code: string): boolean {
  return Object.prototype.hasOwnProperty.call(TABLE, code);
}

export function isDeprecatedStatus(code: string): boolean {
  return TABLE[code]?.deprecated === true;
}

/** The EstadoDte block of a status code; unknown codes classify as the spec demands. */
export function classify(code: string): EstadoDte {
  const r = isKnownStatus(code) ? TABLE[code]! : undefined;
  if (!r) {
    return {
      code,
      label: `Código desconocido ${code}`,
      descripcion: 'El SII respondió un código que este servicio no conoce; contacte a soporte.',
      terminal: UNKNOWN.terminal,
      poll_activo: UNKNOWN.poll_activo,
      categoria: UNKNOWN.categoria,
      accion: UNKNOWN.accion,
    };
  }
  const { label, descripcion, terminal, poll_activo, categoria, accion } = r;
  return { code, label, descripcion, terminal, poll_activo, categoria, accion };
}

/** Stage on the way to a verdict, used by the no-going-backwards rule. */
export function stageOf(code: string): number {
  return (isKnownStatus(code) ? TABLE[code]! : UNKNOWN).stage;
}

/** A code the SII itself answers (EPR, RCH, -11, 106…), not one of this service's own stages. */
export function isAuthorityCode(code: string): boolean {
  return /^[A-Z]{3}$|^-?[0-9]+$/.test(code);
}

/**
 * The status as a taxpayer reads it, the one wording every screen uses: "Aceptado por el SII
 * (EPR)"; a stage of this service in words only ("En cola").
 */
export function statusInWords(code: string): string {
  if (!isKnownStatus(code)) return `Código desconocido del SII (${code})`;
  const { label } = classify(code);
  return isAuthorityCode(code) ? `${label} (${code})` : label;
}
