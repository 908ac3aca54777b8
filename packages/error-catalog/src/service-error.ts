/** One schema issue of a `validation_failed` error: where in the body, and what is wrong. */
export interface ValidationIssue {
  path: string;
  message: string;
}

/**
 * The one error type of the project. `code` is a code of the spec's catalog (see catalog.ts);
 * the HTTP layer turns it into the error envelope with the catalog's status and next_action.
 * Libraries without HTTP (the DTE engine) raise it too, so a rule's code is chosen once, where
 * the rule is checked.
 */
export class ServiceError extends Error {
  readonly code: string;
  readonly detail?: Record<string, unknown>;
  readonly issues?: ValidationIssue[];
  /** overrides the catalog's next_action where the spec gives a path-specific one */
  readonly nextAction?: string;
  /** fields the spec puts at the top level of the error body ("body field `estado`", …) */
  readonly bodyFields?: Record<string, unknown>;

  constructor(
    code: string,
    message: string,
    options: {
      detail?: Record<string, unknown>;
      issues?: ValidationIssue[];
      nextAction?: string;
      bodyFields?: Record<string, unknown>;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ServiceError';
    this.code = code;
    if (options.detail) this.detail = options.detail;
    if (options.issues) this.issues = options.issues;
    if (options.nextAction) this.nextAction = options.nextAction;
    if (options.bodyFields) this.bodyFields = options.bodyFields;
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}
