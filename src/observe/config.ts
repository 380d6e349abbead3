// The flags of src/observe (see usage in src/config.ts) and their environment equivalents.
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

export const observeFlags = {
  'no-metrics': { type: 'boolean' },
  'metrics-partitions': { type: 'boolean' },
  'metrics-public': { type: 'boolean' },
  throttle: { type: 'string' },
  faults: { type: 'string' },
} as const;

export const observeUsage = `  --no-metrics         keep no metrics or insights (CERULEAN_METRICS=0)
  --metrics-partitions metrics for the busiest partitions of each table (CERULEAN_METRICS_PARTITIONS=1)
  --metrics-public     /_metrics and /_insights open to every address   (CERULEAN_METRICS_PUBLIC=1)
  --throttle <rates>   'azure' (2000 entities/s per partition, 20000 per account) or
                       'partition=N,account=M': 503 ServerBusy past them (CERULEAN_THROTTLE)
  --faults <file>      fault injection rules, JSON (CERULEAN_FAULTS; change them at /_faults)`;

interface ObserveValues {
  readonly 'no-metrics'?: boolean | undefined;
  readonly 'metrics-partitions'?: boolean | undefined;
  readonly 'metrics-public'?: boolean | undefined;
  readonly throttle?: string | undefined;
  readonly faults?: string | undefined;
}

export function observeConfig(values: ObserveValues, env: NodeJS.ProcessEnv): ObserveConfig {
  const flag = (name: string): boolean => /^(1|true|yes)$/i.test(env[name] ?? '');
  const throttle = values.throttle ?? env['CERULEAN_THROTTLE'];
  return {
    metrics: !(values['no-metrics'] ?? /^(0|false|no)$/i.test(env['CERULEAN_METRICS'] ?? '')),
    metricsPartitions: values['metrics-partitions'] ?? flag('CERULEAN_METRICS_PARTITIONS'),
    metricsPublic: values['metrics-public'] ?? flag('CERULEAN_METRICS_PUBLIC'),
    throttle: throttle === undefined || throttle === '' ? undefined : parseThrottle(throttle),
    faultsFile: values.faults ?? env['CERULEAN_FAULTS'],
  };
}
