import type { Page } from './page';

/**
 * "Agentes": the MCP agents connected over OAuth (who connected them, to which company and
 * environment, with which permissions, last use) with a "Desconectar" button each, and, for
 * owners and admins, the MCP audit log. Its module (static/pages/agentes.js) reads
 * GET /mcp-connections and GET /mcp-audit-log and calls DELETE /mcp-connections/:id.
 */
export const AGENTS_PAGE: Page = {
  path: '/agentes',
  title: 'Agentes',
  nav: 'Agentes',
  body: `
<h1>Agentes conectados (MCP)</h1>
<p>Cada aplicación de inteligencia artificial que usted u otra persona de la organización autorizó aparece aquí. Puede tener varias conectadas a la vez; desconectar una no afecta a las demás. Cada autorización dura 14 días; después el agente debe pedirla de nuevo.</p>
<table id="tabla-agentes"><caption>Conexiones (más recientes primero)</caption>
<thead><tr><th scope="col">Aplicación</th><th scope="col">Persona</th><th scope="col">Empresa</th><th scope="col">Ambiente</th><th scope="col">Permisos</th><th scope="col">Conectada</th><th scope="col">Último uso</th><th scope="col">Estado</th></tr></thead><tbody></tbody></table>
<section aria-labelledby="t-mcp-auditoria" id="seccion-mcp-auditoria"><h2 id="t-mcp-auditoria">Registro de uso de los agentes</h2>
<p>Cada herramienta que un agente usó, con su resultado. Visible para dueños y administradores.</p>
<table id="tabla-mcp-auditoria"><caption>Llamadas de agentes (más recientes primero)</caption>
<thead><tr><th scope="col">Fecha</th><th scope="col">Aplicación</th><th scope="col">Persona</th><th scope="col">Herramienta</th><th scope="col">Resultado</th></tr></thead><tbody></tbody></table>
<button type="button" id="btn-mas-mcp-auditoria" hidden>Más antiguos</button>
</section>`,
};
