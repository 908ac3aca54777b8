import { ServiceError } from '@dte/error-catalog';

/**
 * The catalog error a call refused with: awaits `call` (a promise, or a function run here), and
 * answers the error when it is a `kind` (ServiceError unless a test asks for a narrower type, such
 * as the api's ApiError); a call that succeeds, or throws anything else, fails the test.
 */
export async function refusal<E extends ServiceError = ServiceError>(
  call: Promise<unknown> | (() => unknown),
  kind: abstract new (...args: never[]) => E = ServiceError as unknown as abstract new (
    ...args: never[]
  ) => E,
): Promise<E> {
  try {
    await (typeof call === 'function' ? call() : call);
  } catch (err) {
    if (err instanceof kind) return err;
    throw err;
  }
  throw new Error(`expected a ${kind.name}`);
}
