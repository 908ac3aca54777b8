/**
 * The OpenAPI Link Objects of the api, in one table: from each operation that creates something
 * to the reads and actions on what it created. A generated client (or schemathesis' stateful
 * phase) follows them with the real id the create answered, instead of guessing ids.
 *
 * `id` is a JSON pointer into the create's response body (each checked against the response's
 * schema by services/api/test/openapi-links.test.ts); every target takes it as its `id` path
 * parameter.
 */
export interface CreateLinks {
  /** operationId of the create */
  from: string;
  /** the create's success statuses that carry the new resource */
  statuses: number[];
  /** JSON pointer of the new resource's id in that response body */
  id: string;
  /** operationIds of the reads and actions on it (each with an `{id}` path parameter) */
  to: string[];
}

/** A DTE's reads and actions (POST /dtes and POST /dtes/:id/derive both answer a DTE). */
const DTE_TARGETS = [
  'getDte',
  'getDteEvents',
  'getDteXml',
  'getDtePdf',
  'refreshDteStatus',
  'resendDteDelivery',
  'deriveDte',
];

export const CREATE_LINKS: readonly CreateLinks[] = [
  { from: 'emitDte', statuses: [201, 202], id: '/id', to: DTE_TARGETS },
  { from: 'deriveDte', statuses: [202], id: '/id', to: DTE_TARGETS },
  { from: 'emitBoleta', statuses: [202], id: '/id', to: ['getBoleta', 'getBoletaXml', 'getBoletaPdf'] },
  { from: 'submitBoletaBatch', statuses: [202], id: '/batchId', to: ['getBoletaBatch'] },
  { from: 'issueBhe', statuses: [202], id: '/id', to: ['getBhe', 'annulBhe'] },
  { from: 'uploadCaf', statuses: [201], id: '/id', to: ['deleteCaf'] },
  { from: 'requestCaf', statuses: [201], id: '/id', to: ['deleteCaf'] },
  {
    from: 'uploadCertificate',
    statuses: [201],
    id: '/id',
    to: ['activateCertificate', 'deleteCertificate'],
  },
  {
    from: 'createWebhook',
    statuses: [201],
    id: '/id',
    to: ['testWebhook', 'rotateWebhookSecret', 'deleteWebhook'],
  },
  { from: 'createSucursal', statuses: [201], id: '/id', to: ['closeSucursal'] },
  { from: 'createApiKey', statuses: [201], id: '/id', to: ['revokeApiKey', 'rotateApiKey'] },
  { from: 'rotateApiKey', statuses: [201], id: '/id', to: ['revokeApiKey', 'rotateApiKey'] },
  {
    from: 'receiveIntercambio',
    statuses: [201],
    id: '/documentos/0/id',
    to: ['getRecepcion', 'getRecepcionXml', 'registerRecepcionEvento'],
  },
];

/** `getDteXml` → `GetDteXml`: the link's name in the response's `links` map. */
export function linkName(operationId: string): string {
  return operationId.charAt(0).toUpperCase() + operationId.slice(1);
}

/** The `links` map of one response of `operationId` (undefined when it links nowhere). */
export function responseLinks(
  operationId: string,
  status: number,
):
  | Record<string, { operationId: string; parameters: Record<string, string>; description: string }>
  | undefined {
  const entry = CREATE_LINKS.find((l) => l.from === operationId && l.statuses.includes(status));
  if (!entry) return undefined;
  const links: Record<
    string,
    { operationId: string; parameters: Record<string, string>; description: string }
  > = {};
  for (const target of entry.to) {
    links[linkName(target)] = {
      operationId: target,
      parameters: { id: `$response.body#${entry.id}` },
      description: `${target} on what ${operationId} created (its id at ${entry.id})`,
    };
  }
  return links;
}
