// What the flags of src/observe (the server's flag table, src/config.ts) switch on.
import { parseThrottle, type ThrottleRates } from './throttle.js';

export interface ObserveConfig {
  /** Keep metrics and workload figures and serve /_metrics and /_insights (default on). */
  readonly metrics: boolean;
  /** Partition-level series for the busiest partitions of each table. */
  readonly metricsPartitions: boolean;
  /** /_metrics and /_insights readable by anyone, not only from loopback or with a key. */
  readonly metricsPublic: boolean;
  /** Scalability targets to enforce; undefined = no throttling. */
  readonly throttle: ThrottleRates | undefined;
  /** Fault rules to start with (JSON). */
  readonly faultsFile: string | undefined;
}

interface ObserveValues {
  readonly 'no-metrics'?: boolean | undefined;
  readonly 'metrics-partitions'?: boolean | undefined;
  readonly 'metrics-public'?: boolean | undefined;
  readonly throttle?: string | undefined;
  readonly faults?: string | undefined;
}

/** The flags' values (from the command line or the environment); throws an Error for a bad --throttle. */
export function observeConfig(values: ObserveValues): ObserveConfig {
  const { throttle } = values;
  return {
    metrics: values['no-metrics'] !== true,
    metricsPartitions: values['metrics-partitions'] === true,
    metricsPublic: values['metrics-public'] === true,
    throttle: throttle === undefined || throttle === '' ? undefined : parseThrottle(throttle),
    faultsFile: values.faults,
  };
}
