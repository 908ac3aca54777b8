export {
  BOLETA_ANONYMOUS_RUT,
  BOLETA_MAX_ITEMS,
  IND_SERVICIO_VENTAS,
  boletaLineAmount,
  buildBoletaDocument,
  checkBoleta,
  checkBoletaFecha,
} from './document';
export { boletaFechaWindow } from '../input/santiago-date';
export type { BoletaDetalle, BoletaDocument, BoletaInput, BoletaTipo } from './document';
export { stampAndSignBoleta, writeBoletaBody } from './xml';
export { buildEnvioBoleta, MAX_BOLETAS_PER_ENVIO } from './envio';
export type { EnvioBoletaOptions } from './envio';
