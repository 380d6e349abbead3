// Interceptors, composed as undici composes its dispatch interceptors: each takes the next step and
// answers a step that runs around it. They are the one way a layer above the services (src/observe:
// throttling, faults, metrics, the workload watch) takes part in what a service does, whichever the
// service: around each operation the front door runs (its route's handler, `OperationInterceptor`),
// and around the methods of what the operations work on (a store, the Table service's queries,
// `interceptMethods`). docs/observability.md says why this and not decorators.
import type { IncomingHttpHeaders } from 'node:http';
import type { Reply } from './respond.js';
import type { OperationName } from './service-definition.js';

/** Any method: each interceptor keeps its own method's type. */
type Method = (...args: never[]) => unknown;

/** A step around `next`: it may act before and after it, change what it is given, or not call it. */
export type Interceptor<F extends Method> = (next: F) => F;

/** `last` with `interceptors` around it, the first the outermost. */
export function intercept<F extends Method>(last: F, interceptors: readonly Interceptor<F>[]): F {
  return interceptors.reduceRight<F>((next, interceptor) => interceptor(next), last);
}

/** Interceptors for some of an object's methods, by name. */
export type MethodInterceptors<T> = {
  readonly [K in keyof T]?: T[K] extends Method ? Interceptor<T[K]> : never;
};

/**
 * `target` with the methods `interceptors` name run through them; every other member is the
 * target's own (a method bound to it), so the target's state stays in one object.
 */
export function interceptMethods<T extends object>(target: T, interceptors: MethodInterceptors<T>): T {
  const replaced = new Map<PropertyKey, unknown>();
  for (const [name, interceptor] of Object.entries(interceptors) as [keyof T & string, Interceptor<Method>][]) {
    const method = target[name] as Method;
    replaced.set(name, interceptor(method.bind(target)));
  }
  return new Proxy(target, {
    get(object, name) {
      if (replaced.has(name)) return replaced.get(name);
      const value: unknown = Reflect.get(object, name, object);
      if (typeof value !== 'function') return value;
      const bound = (value as Method).bind(object);
      replaced.set(name, bound);
      return bound;
    },
  });
}

/** One authorized operation as the front door runs it, as its interceptors see it. */
export interface Operation {
  readonly name: OperationName;
  readonly account: string;
  /**
   * The table, queue or container it addresses, if any (fault rules' `table`); computed on demand:
   * a batch's is in its body.
   */
  readonly scope: () => string | undefined;
  /** The one object it addresses when its service has a per-object rate target (a blob, `container/name`). */
  readonly object: string | undefined;
  /** Who asks (the workload watch leaves out Cerulean's own tools) and what they ask. */
  readonly headers: IncomingHttpHeaders;
  /** The request body as the handler will read it, for a route that streams it (blob content). */
  readonly body: AsyncIterable<Buffer> | undefined;
}

/** Runs an operation: its reply, or 'drop' to close the connection unanswered. */
export type RunOperation = (operation: Operation) => Promise<Reply | 'drop'>;

export type OperationInterceptor = Interceptor<RunOperation>;
