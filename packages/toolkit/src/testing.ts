// Client-side fault injection for tests of resilience: a pipeline policy that fails chosen
// requests, either before they are sent (the service never sees them) or after the response
// arrived (the service applied them, the client is told they failed: the ambiguous case).
import { RestError, type PipelinePolicy } from '@azure/core-rest-pipeline';

/** A small seeded PRNG (mulberry32): the same seed gives the same sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FaultOptions {
  /** Probability that a request fails, in [0, 1]. */
  probability: number;
  random: () => number;
  /** Status of the injected error (503 ServerBusy by default). */
  status?: number;
  /** Only requests this accepts are candidates (e.g. only writes). */
  filter?: (method: string, url: string) => boolean;
}

export interface FaultCounters {
  before: number;
  after: number;
}

/**
 * Fails a random share of requests: half of the failures before sending, half after the response
 * came back (the write happened, the client sees an error). Add it to a client with
 * `additionalPolicies: [{ policy, position: 'perRetry' }]`.
 */
export function faultInjectionPolicy(options: FaultOptions): {
  policy: PipelinePolicy;
  counters: FaultCounters;
  enabled: { value: boolean };
} {
  const counters: FaultCounters = { before: 0, after: 0 };
  const enabled = { value: true };
  const status = options.status ?? 503;
  const fail = (request: { method: string; url: string }, phase: string) =>
    new RestError(`injected ${status} ${phase} ${request.method} ${request.url}`, { statusCode: status });
  return {
    counters,
    enabled,
    policy: {
      name: 'faultInjection',
      async sendRequest(request, next) {
        const candidate = enabled.value && (options.filter?.(request.method, request.url) ?? true);
        if (candidate && options.random() < options.probability) {
          if (options.random() < 0.5) {
            counters.before++;
            throw fail(request, 'before sending');
          }
          await next(request);
          counters.after++;
          throw fail(request, 'after the service answered');
        }
        return next(request);
      },
    },
  };
}
