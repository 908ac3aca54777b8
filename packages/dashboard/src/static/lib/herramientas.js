// @ts-check
// The MCP tools agents call, in words (the agents' audit log and the approvals page).

/** @type {Record<string, string>} */
export const HERRAMIENTAS = {
  emitir_dte: 'Emitir un documento',
  derivar_dte: 'Derivar documento',
  obtener_dte: 'Ver un documento',
  listar_dtes: 'Listar documentos',
  eventos_dte: 'Ver eventos de un documento',
  refrescar_estado_dte: 'Consultar el estado en el SII',
  totales_dte: 'Ver totales del período',
  listar_certificados: 'Ver certificados',
  obtener_empresa: 'Ver la empresa',
  listar_sucursales: 'Ver sucursales',
  consultar_plan: 'Ver plan y consumo',
  consultar_rcv: 'Ver el registro de compras y ventas',
  sincronizar_rcv: 'Sincronizar el registro de compras y ventas',
  listar_recepcion: 'Listar facturas recibidas',
  obtener_recepcion: 'Ver una factura recibida',
  registrar_evento_recepcion: 'Acuse o reclamo de una factura recibida',
  consultar_accion_pendiente: 'Consultar una acción pendiente',
};

/**
 * A tool in words: "Derivar documento" (the tool's name when unknown).
 * @param {string} tool
 */
export const herramienta = (tool) => HERRAMIENTAS[tool] || tool;
