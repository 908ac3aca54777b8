import type { DataSource } from 'typeorm';
import type { BacklogGate, ExchangeRateSource } from '@dte/emission';
import type { JsonSchema } from '@dte/http-contract';
import type { Principal } from '@dte/tenancy';
import type { McpActionType } from './caps';
import type { AgentsDeps } from './deps';

export interface ToolEnv {
  deps: AgentsDeps;
  db: DataSource;
  rates: ExchangeRateSource;
  now: Date;
  /** backpressure of emission (@dte/emission backlog-gate.ts), the same gate as the REST routes */
  backlog?: BacklogGate;
}

/**
 * One MCP tool: the scope it declares (spec, Authentication 5), its input schema (the REST body's
 * schemas/http file, bundled, plus what REST carries in headers or the path), and `run`, which
 * calls THE service function of the REST route (no HTTP loopback, no second copy of the rules).
 */
export interface AgentTool {
  name: string;
  title: string;
  description: string;
  scope: string;
  readOnly: boolean;
  inputSchema: JsonSchema;
  /** the MCP cap that counts this tool (Limits: MCP action caps) */
  capType?: McpActionType;
  /** irreversible calls wait for the user's approval (pending_actions) */
  irreversible?(args: Record<string, unknown>): boolean;
  /**
   * One line the approval page shows, computed when the call is parked (it may read the
   * document it names, so a call on a missing document is refused then, nothing parked).
   */
  summary?(args: Record<string, unknown>, principal: Principal, env: ToolEnv): string | Promise<string>;
  /** checks the arguments against the same schema as the REST route (400 validation_failed) */
  validate(args: Record<string, unknown>): void;
  run(args: Record<string, unknown>, principal: Principal, env: ToolEnv): Promise<Record<string, unknown>>;
}
