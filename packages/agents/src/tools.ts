import { readBilling } from '@dte/billing';
import { certificateRecord, listCertificates } from '@dte/certificates';
import { listCurrentBranches, type Principal } from '@dte/tenancy';
import type { AgentTool } from './agent-tool';
import {
  loadCompanyProfile,
  deriveDte,
  type DeriveBody,
  type DteScope,
  emitDte,
  listDtes,
  LIST_SORTS,
  parseListQuery,
  RECEPTOR_ESTADOS,
  detailRecord,
  emissionResponse,
  dteEvents,
  getDteOr404,
  refreshStatus,
  dteTotales,
  parsePeriodo,
} from '@dte/emission';
import { ApiError } from '@dte/error-catalog';
import {
  derivationNeedsApproval,
  describeDerivation,
  describeEmission,
  emissionNeedsApproval,
} from './approval-summary';
import { checkArgs, objectSchema, validateNested, withBody } from './tool-kit';
import { RECEPCION_TOOLS } from './recepcion-tools';

const scopeOf = (p: Principal): DteScope => ({
  organizationId: p.organizationId,
  environment: p.environment,
  companyId: p.companyId,
});

const ID = { type: 'string', format: 'uuid', description: 'the document id' };
const IDEMPOTENCY_KEY = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  description: 'the Idempotency-Key of the REST route: the same key and body return the same document',
};
const CERT_ID = { type: 'string', format: 'uuid', description: 'the X-Cert-Id of the REST route (optional)' };

const MCP_TIPOS = [33, 34, 46, 52, 56, 61];

export const AGENT_TOOLS: AgentTool[] = [
  {
    name: 'emitir_dte',
    title: 'Emitir un documento tributario',
    description:
      'Emite una factura (33), factura exenta (34), factura de compra (46), guía de despacho (52), nota de débito (56) o nota de crédito (61): folio asignado, firmado y enviado al SII. Una nota (56/61) o un override_* es irreversible y espera la aprobación del usuario. `documento` es el mismo cuerpo que POST /dtes',
    scope: 'dte:write',
    readOnly: false,
    capType: 'emit',
    inputSchema: withBody(
      'dte-emission-body.schema.json',
      'documento',
      { idempotency_key: IDEMPOTENCY_KEY, certificate_id: CERT_ID },
      ['idempotency_key'],
    ),
    // a 56/61 moves money over an existing document; an override forces a rule of the SII
    irreversible: (args) => emissionNeedsApproval(args.documento),
    summary: (args, principal, env) =>
      describeEmission(env.db, principal, args.documento as Record<string, unknown>, env.now),
    validate(args) {
      checkArgs(args, { idempotency_key: 'key', certificate_id: 'uuid?' });
      validateNested('dte-emission-body.schema.json', 'documento', args);
      const tipo = (args.documento as { tipo_dte?: unknown }).tipo_dte;
      if (!MCP_TIPOS.includes(Number(tipo))) {
        throw new ApiError(
          'dte.tipo_not_supported',
          `Over MCP, tipo_dte must be one of ${MCP_TIPOS.join(', ')}.`,
          {
            detail: { tipo_dte: tipo, soportados: MCP_TIPOS },
          },
        );
      }
    },
    async run(args, principal, env) {
      const { row } = await emitDte(
        env.db,
        principal,
        {
          body: args.documento,
          idempotencyKey: String(args.idempotency_key),
          certIdHeader: args.certificate_id as string | undefined,
        },
        env.now,
        { rates: env.rates, backlog: env.backlog },
      );
      return emissionResponse(row) as unknown as Record<string, unknown>;
    },
  },
  {
    name: 'derivar_dte',
    title: 'Derivar un documento (copia, anulación, corrección)',
    description:
      'Emite un documento derivado de otro: copy, anular (nota de crédito que anula), corregir-nc, corregir-nd, corregir-texto. Toda nota sobre el documento (todo salvo copy) y todo override_* es irreversible y espera la aprobación del usuario. `derivacion` es el mismo cuerpo que POST /dtes/:id/derive',
    scope: 'dte:write',
    readOnly: false,
    capType: 'emit',
    inputSchema: withBody(
      'dte-derive-body.schema.json',
      'derivacion',
      { id: ID, idempotency_key: IDEMPOTENCY_KEY, certificate_id: CERT_ID },
      ['id', 'idempotency_key'],
    ),
    // every note over the document (anular, corregir-*) and any override waits; a copy does not
    irreversible: (args) => derivationNeedsApproval(args.derivacion as DeriveBody),
    summary: (args, principal, env) =>
      describeDerivation(env.db, principal, String(args.id), args.derivacion as DeriveBody, env.now),
    validate(args) {
      checkArgs(args, { id: 'uuid', idempotency_key: 'key', certificate_id: 'uuid?' });
      validateNested('dte-derive-body.schema.json', 'derivacion', args);
    },
    async run(args, principal, env) {
      const body = args.derivacion as DeriveBody;
      const { row } = await deriveDte(
        env.db,
        principal,
        String(args.id),
        {
          body,
          idempotencyKey: String(args.idempotency_key),
          certIdHeader: args.certificate_id as string | undefined,
        },
        env.now,
        { rates: env.rates, backlog: env.backlog },
      );
      return { ...emissionResponse(row), derived_from: String(args.id), action: body.action };
    },
  },
  {
    name: 'obtener_dte',
    title: 'Ver un documento',
    description: 'Detalle de un documento con su bloque EstadoDte (como GET /dtes/:id)',
    scope: 'dte:read',
    readOnly: true,
    inputSchema: objectSchema({ id: ID }, ['id']),
    validate: (args) => checkArgs(args, { id: 'uuid' }),
    run: async (args, principal, env) =>
      detailRecord(await getDteOr404(env.db, scopeOf(principal), String(args.id))) as unknown as Record<
        string,
        unknown
      >,
  },
  {
    name: 'listar_dtes',
    title: 'Listar documentos',
    description: 'Documentos emitidos con filtros, orden y cursor (como GET /dtes): {data, next_cursor}',
    scope: 'dte:read',
    readOnly: true,
    inputSchema: objectSchema({
      limit: { type: 'integer', minimum: 1, maximum: 100 },
      sort: { type: 'string', enum: [...LIST_SORTS] },
      dir: { type: 'string', enum: ['asc', 'desc'] },
      cursor: { type: 'string' },
      polled_since: { type: 'string' },
      tipo_dte: { type: 'integer' },
      folio: { type: 'integer' },
      rut_receptor: { type: 'string' },
      fecha_emision_desde: { type: 'string', format: 'date' },
      fecha_emision_hasta: { type: 'string', format: 'date' },
      receptor_estado: { type: 'string', enum: [...RECEPTOR_ESTADOS] },
      sii_status: { type: 'string' },
    }),
    validate: () => undefined,
    async run(args, principal, env) {
      const query = Object.fromEntries(
        Object.entries(args)
          .filter(([, v]) => v !== undefined && v !== null)
          .map(([k, v]) => [k, String(v)]),
      );
      return (await listDtes(env.db, scopeOf(principal), parseListQuery(query))) as unknown as Record<
        string,
        unknown
      >;
    },
  },
  {
    name: 'eventos_dte',
    title: 'Eventos de un documento',
    description:
      'Historial cronológico de los cambios de estado con la glosa del SII (como GET /dtes/:id/events)',
    scope: 'dte:read',
    readOnly: true,
    inputSchema: objectSchema({ id: ID }, ['id']),
    validate: (args) => checkArgs(args, { id: 'uuid' }),
    run: async (args, principal, env) =>
      (await dteEvents(env.db, scopeOf(principal), String(args.id))) as unknown as Record<string, unknown>,
  },
  {
    name: 'refrescar_estado_dte',
    title: 'Pedir al SII el estado de un documento',
    description:
      'Vuelve a consultar al SII un documento cuyo seguimiento se detuvo (como POST /dtes/:id/refresh-status)',
    scope: 'dte:write',
    readOnly: false,
    inputSchema: objectSchema({ id: ID }, ['id']),
    validate: (args) => checkArgs(args, { id: 'uuid' }),
    async run(args, principal, env) {
      const out = await refreshStatus(env.db, scopeOf(principal), String(args.id), env.now);
      return out.body as unknown as Record<string, unknown>;
    },
  },
  {
    name: 'totales_dte',
    title: 'Totales del período',
    description: 'Totales de documentos de un período YYYY-MM (como GET /dtes/totales)',
    scope: 'dte:read',
    readOnly: true,
    inputSchema: objectSchema({ periodo: { type: 'string', pattern: '^\\d{4}-\\d{2}$' } }),
    validate: () => undefined,
    run: async (args, principal, env) =>
      (await dteTotales(
        env.db,
        scopeOf(principal),
        parsePeriodo(args.periodo, env.now),
      )) as unknown as Record<string, unknown>,
  },
  {
    name: 'listar_certificados',
    title: 'Certificados digitales',
    description:
      'Metadatos de los certificados vigentes (nunca el archivo .p12 ni su clave), como GET /certificates',
    scope: 'certificates:read',
    readOnly: true,
    inputSchema: objectSchema({}),
    validate: () => undefined,
    async run(_args, principal, env) {
      const rows = await listCertificates(env.db, principal.organizationId, principal.companyId);
      return { data: rows.map((r) => certificateRecord(r, env.now)) };
    },
  },
  {
    name: 'obtener_empresa',
    title: 'Datos de la empresa',
    description: 'La empresa de esta conexión: RUT, razón social, giro, dirección y resoluciones del SII',
    scope: 'empresas:read',
    readOnly: true,
    inputSchema: objectSchema({}),
    validate: () => undefined,
    async run(_args, principal, env) {
      const c = await loadCompanyProfile(env.db, principal.organizationId, principal.companyId!);
      return { ...c, sii_env: principal.environment } as unknown as Record<string, unknown>;
    },
  },
  {
    name: 'listar_sucursales',
    title: 'Sucursales de la empresa',
    description: 'Sucursales vigentes de la empresa de esta conexión (como GET /sucursales)',
    scope: 'empresas:read',
    readOnly: true,
    inputSchema: objectSchema({}),
    validate: () => undefined,
    run: async (_args, principal, env) =>
      listCurrentBranches(env.db, principal.organizationId, principal.companyId),
  },
  {
    name: 'consultar_plan',
    title: 'Plan y consumo',
    description:
      'El plan de la organización, los documentos emitidos este mes y su límite por ambiente, los últimos meses y los pagos (como GET /billing)',
    scope: 'billing:read',
    readOnly: true,
    inputSchema: objectSchema({}),
    validate: () => undefined,
    run: async (_args, principal, env) =>
      (await readBilling(env.db, principal.organizationId, env.now)) as unknown as Record<string, unknown>,
  },
  ...RECEPCION_TOOLS,
];

export function agentTool(name: string): AgentTool | undefined {
  return AGENT_TOOLS.find((t) => t.name === name);
}
