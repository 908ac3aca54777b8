import type { Logger } from '@dte/service-runtime';
import type Router from '@koa/router';
import type { Redis } from 'ioredis';
import type { Context, Middleware } from 'koa';
import type { DataSource } from 'typeorm';
import type { Config } from './config';
import type { KeyWrapper } from '@dte/secrets';
import type { FolioGrantClient, CafDocumentsProbe } from '@dte/folios';
import type { Scope, MemberRole, PrincipalPreload } from '@dte/tenancy';

export type { MemberRole, Principal, PrincipalPreload } from '@dte/tenancy';

/** Everything the api needs from outside, so a test builds the app with real or local parts. */
export interface ApiDeps {
  config: Config;
  dataSource: DataSource;
  redis: Redis;
  keys: KeyWrapper;
  folioGrant: FolioGrantClient;
  cafDocuments: CafDocumentsProbe;
  logger: Logger;
  clock?: () => Date;
  /**
   * Where the emission routes (/dtes, issue 6) attach: called with the /api/v1 router after the
   * api-core routes, and given the building blocks (authentication, scopes, body parsing).
   */
  mountExtraRoutes?: (router: Router, kit: RouteKit) => void;
  /** the SII situation of a RUT (default: the SII simulator's taxpayer register at SII_BASE_URL) */
  situacion?: import('@dte/accounts').SituacionSource;
  /** more /readyz checks, read at each request (main.ts adds the pipeline's Kafka check) */
  readiness?: import('@dte/service-runtime').HealthCheck[];
}

export type HttpMethod = 'get' | 'post' | 'put' | 'delete';

/**
 * none; bearer (API key only); bearer_or_session; session (dashboard session only, with an
 * organization); session_user (dashboard session only, organization optional: onboarding).
 */
export type Auth = 'none' | 'bearer' | 'bearer_or_session' | 'session' | 'session_user';

export interface RouteResponse {
  description: string;
  /** a schemas/http file, or undefined for no body */
  schema?: string;
  contentType?: string;
}

/**
 * One route of the api: the router and the OpenAPI document are both built from this list, so
 * they cannot disagree.
 */
export interface RouteDef {
  method: HttpMethod;
  /** Koa path under /api/v1, e.g. /certificates/:id */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  auth: Auth;
  /** API key scope required (sessions are checked by `roles` instead) */
  scope?: Scope;
  /** session roles allowed; absent = any member of the organization */
  roles?: MemberRole[];
  /** read in the same statement as the API key (Principal.preloaded): one round trip fewer */
  preload?: PrincipalPreload;
  body?: {
    kind: 'json' | 'multipart';
    schema: string;
    /**
     * 'handler': the handler validates the body against `schema` itself (the DTE engine, which
     * answers codes of its own before the schema and validates the trimmed body); the route then
     * only parses the JSON. Default: the route validates it (400 validation_failed).
     */
    validatedBy?: 'route' | 'handler';
    /**
     * Which of the schema's x-examples this route documents (a route sharing a schema may accept
     * fewer bodies, e.g. preview's types); default all.
     */
    examples?: (value: unknown) => boolean;
  };
  /** extra request headers documented (name -> description) */
  headers?: Record<string, string>;
  query?: Record<string, { description: string; schema: Record<string, unknown> }>;
  responses: Record<number, RouteResponse>;
  /** catalog codes this route answers besides the common ones */
  errors: string[];
  handler: (ctx: Context) => Promise<void>;
}

/** The building blocks of a route, shared with routes mounted by other parts (the /dtes routes). */
export interface RouteKit {
  /** middleware chain for a route definition: auth, rate limit, CSRF, scope/role, write cap, JSON body */
  chain(def: Pick<RouteDef, 'auth' | 'scope' | 'roles' | 'body' | 'preload'>): Middleware[];
  now(): Date;
}
