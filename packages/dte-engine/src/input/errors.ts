import { ServiceError, type ValidationIssue } from '@dte/error-catalog';

/** `validation_failed` (400): the body does not match its schema; one issue per field. */
export function validationFailed(issues: ValidationIssue[]): ServiceError {
  const first = issues[0];
  const summary = first ? `${first.path || 'body'} ${first.message}` : 'invalid body';
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new ServiceError('validation_failed', `The body does not match the schema: ${summary}${more}`, {
    issues,
  });
}
