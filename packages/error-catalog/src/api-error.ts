import { ServiceError, type ValidationIssue } from './service-error';

/**
 * A ServiceError raised by the api, with the optional `hint` of the envelope. Library code
 * raises plain ServiceError; both render the same way.
 */
export class ApiError extends ServiceError {
  readonly hint?: string;
  /** true where the catalog's next_action does not apply (forbidden for a role, not a scope) */
  readonly withoutNextAction?: boolean;

  constructor(
    code: string,
    message: string,
    options: {
      detail?: Record<string, unknown>;
      issues?: ValidationIssue[];
      nextAction?: string;
      hint?: string;
      withoutNextAction?: boolean;
      bodyFields?: Record<string, unknown>;
      cause?: unknown;
    } = {},
  ) {
    super(code, message, options);
    this.name = 'ApiError';
    if (options.hint) this.hint = options.hint;
    if (options.withoutNextAction) this.withoutNextAction = true;
  }
}
