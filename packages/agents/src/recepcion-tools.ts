/**
 * The purchases side over MCP (issue 15): the RCV and its sync (rcv:read), the inbox (recepcion:read) and the
 * acuse / reclamo at the SII register (recepcion:write). Each tool calls the REST route's own
 * service function (@dte/reception: register-eventos.ts, rcv-requests.ts); `registrar_evento_recepcion` is
 * ALWAYS irreversible, so over MCP it only parks a pending action the user approves or rejects
 * in the dashboard (spec, Authentication 5); approval runs it once through the same function as
 * POST /recepcion/:id/eventos.
 */
import { clp } from '@dte/es-cl';
import {
  checkPeriodo,
  listInbox,
  parseRecepcionQuery,
  showInboxRow,
  checkEventoBody,
  inboxRowOr404,
  inboxScopeOf,
  registerInboxEvento,
  rcvPeriodOf,
  requestRcvSync,
} from '@dte/reception';
import { validateBody } from '@dte/http-contract';
import { checkArgs, objectSchema, validateNested, withBody } from './tool-kit';
import { bundledSchema } from './tool-schemas';
import type { AgentTool } from './agent-tool';

const INBOX_ID = { type: 'string', format: 'uuid', description: 'the id of the inbox document' };

/** What each register action means, as the approval page says it. */
export const ACCIONES: Record<string, string> = {
  ACD: 'Aceptar el contenido del documento (ACD)',
  ERM: 'Otorgar el recibo de mercaderías o servicios (ERM)',
  RCD: 'Reclamar el contenido del documento (RCD)',
  RFP: 'Reclamar por falta parcial de mercaderías (RFP)',
  RFT: 'Reclamar por falta total de mercaderías (RFT)',
};

const TIPOS: Record<number, string> = {
  33: 'factura electrónica',
  34: 'factura exenta',
  43: 'liquidación factura',
};

export const RECEPCION_TOOLS: AgentTool[] = [
  {
    name: 'consultar_rcv',
    title: 'Registro de compras y ventas (RCV)',
    description:
      'El RCV sincronizado de un período YYYY-MM: estado en el SII de cada compra y venta y las diferencias con lo emitido (como GET /rcv)',
    scope: 'rcv:read',
    readOnly: true,
    inputSchema: (({ definitions: _d, ...s }) => s)(bundledSchema('rcv-sync-request.schema.json')),
    validate: (args) => validateBody('rcv-sync-request.schema.json', args),
    run: async (args, principal, env) =>
      (await rcvPeriodOf(env.deps, principal, checkPeriodo(args.periodo, env.now))) as unknown as Record<
        string,
        unknown
      >,
  },
  {
    name: 'sincronizar_rcv',
    title: 'Sincronizar el RCV de un período',
    description:
      'Pide al SII el registro de compras y ventas de un período YYYY-MM (en cola; consultar_rcv lee el resultado), como POST /rcv',
    scope: 'rcv:read',
    readOnly: false,
    inputSchema: (({ definitions: _d, ...s }) => s)(bundledSchema('rcv-sync-request.schema.json')),
    validate: (args) => validateBody('rcv-sync-request.schema.json', args),
    run: async (args, principal, env) =>
      requestRcvSync(env.deps, principal, checkPeriodo(args.periodo, env.now), env.now),
  },
  {
    name: 'listar_recepcion',
    title: 'Bandeja de compras',
    description:
      'Documentos recibidos de proveedores con el plazo legal de 8 días y la cesión (como GET /recepcion): {documentos, total}',
    scope: 'recepcion:read',
    readOnly: true,
    inputSchema: objectSchema({
      cedida: { type: 'boolean', description: 'true: solo los documentos que el SII muestra cedidos' },
      page: { type: 'integer', minimum: 1 },
      pageSize: { type: 'integer', minimum: 1, maximum: 500 },
    }),
    validate: () => undefined,
    async run(args, principal, env) {
      // the REST query's own parser and bounds (recepcion.query_invalid)
      const query: Record<string, string> = {};
      if (args.cedida === true) query.cedida = 'true';
      else if (args.cedida !== undefined && args.cedida !== false) query.cedida = String(args.cedida);
      for (const k of ['page', 'pageSize'])
        if (args[k] !== undefined && args[k] !== null) query[k] = String(args[k]);
      const q = parseRecepcionQuery(query);
      return (await listInbox(env.db, inboxScopeOf(principal), q, env.now)) as unknown as Record<
        string,
        unknown
      >;
    },
  },
  {
    name: 'obtener_recepcion',
    title: 'Un documento recibido',
    description:
      'Un documento de la bandeja de compras con sus eventos, plazo y cesión (como GET /recepcion/:id)',
    scope: 'recepcion:read',
    readOnly: true,
    inputSchema: objectSchema({ id: INBOX_ID }, ['id']),
    validate: (args) => checkArgs(args, { id: 'uuid' }),
    run: async (args, principal, env) =>
      showInboxRow(await inboxRowOr404(env.deps, principal, String(args.id)), env.now) as unknown as Record<
        string,
        unknown
      >,
  },
  {
    name: 'registrar_evento_recepcion',
    title: 'Acusar recibo o reclamar un documento recibido',
    description:
      'Registra en el SII la aceptación (ACD, ERM) o el reclamo (RCD, RFP, RFT) de un documento de la bandeja. Irreversible: siempre queda como acción pendiente hasta que el usuario la apruebe en el panel; consulta su estado con consultar_accion_pendiente. `evento` es el mismo cuerpo que POST /recepcion/:id/eventos',
    scope: 'recepcion:write',
    readOnly: false,
    inputSchema: withBody('recepcion-evento.schema.json', 'evento', { id: INBOX_ID }, ['id']),
    irreversible: () => true,
    async summary(args, principal, env) {
      const body = checkEventoBody(args.evento);
      const row = await inboxRowOr404(env.deps, principal, String(args.id));
      const tipo = TIPOS[Number(row.tipo_dte)] ?? `documento tipo ${row.tipo_dte}`;
      return `${ACCIONES[body.accion]} ante el SII: ${tipo} folio ${row.folio} de ${row.rut_emisor}${
        row.razon_social_emisor ? ` (${row.razon_social_emisor})` : ''
      }, total ${clp(row.mnt_total)}${body.forzar ? '; documento cedido, reclamo forzado' : ''}`;
    },
    validate(args) {
      checkArgs(args, { id: 'uuid' });
      validateNested('recepcion-evento.schema.json', 'evento', args);
      checkEventoBody(args.evento);
    },
    run: async (args, principal, env) =>
      (await registerInboxEvento(
        env.deps,
        principal,
        String(args.id),
        checkEventoBody(args.evento),
        env.now,
      )) as unknown as Record<string, unknown>,
  },
];
