/**
 * Counts the calls of a method on the prototype of a kafkajs internal class (e.g. the broker
 * client's `fetch`, a request queue's `checkPendingRequests`) made by this process, for tests
 * that assert how often kafkajs does something; `restore()` puts the method back.
 */
export function countKafkajsCalls(modulePath: string, method: string): { count(): number; restore(): void } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const proto = (require(modulePath) as { prototype: Record<string, (...a: unknown[]) => unknown> })
    .prototype;
  const original = proto[method];
  if (typeof original !== 'function') throw new Error(`${modulePath} has no method ${method}`);
  let n = 0;
  proto[method] = function (this: unknown, ...args: unknown[]) {
    n += 1;
    return original.apply(this, args);
  };
  return { count: () => n, restore: () => void (proto[method] = original) };
}
