// Command-line options of `npm run bench`, with the defaults of a full and of a --quick run.
import { defaultServerKinds, serverKinds, type ServerKind } from './servers.js';

export interface BenchOptions {
  quick: boolean;
  big: boolean;
  /** Scenario names to run; empty = all. */
  scenarios: string[];
  concurrency: number[];
  durationS: number;
  warmupS: number;
  /** Entities in the main preloaded table (point reads, writes over existing keys, table scan). */
  preload: number;
  rounds: number;
  servers: ServerKind[];
  /** Base name of the report files in bench/results/ (default latest). */
  report: string;
}

export const usage = `usage: npm run bench -- [options]
  --quick              smoke run: concurrency 16, 1 s windows, 10k preload
  --big                also scan a 1M-entity table (preloading takes minutes per server)
  --scenarios a,b      only these scenarios (default: all)
  --concurrency 1,16   closed-loop concurrency levels (default 1,16,64)
  --duration S         measured window per run in seconds (default 3; quick 1)
  --warmup S           warm-up per run in seconds (default 1; quick 0.3)
  --preload N          entities in the main table (default 100000; quick 10000)
  --rounds R           interleaved rounds per server (default 2)
  --servers a,b        any of ${serverKinds.join(', ')} (default: ${defaultServerKinds.join(',')})
  --report NAME        write bench/results/NAME.{json,md} (default latest)`;

const countMax = 10_000_000;
const concurrencyMax = 1024;

const knownFlags = new Set([
  'quick',
  'big',
  'help',
  'scenarios',
  'concurrency',
  'duration',
  'warmup',
  'preload',
  'rounds',
  'servers',
  'report',
]);

/** `--name value`, `--name=value` and the bare switches, by name; unknown names and --help throw the usage. */
function readFlags(argv: readonly string[]): Map<string, string | true> {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}\n${usage}`);
    const [name, inline] = arg.slice(2).split('=', 2) as [string, string | undefined];
    if (name === 'quick' || name === 'big' || name === 'help') flags.set(name, true);
    else {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new Error(`--${name} needs a value\n${usage}`);
      flags.set(name, value);
    }
  }
  for (const name of flags.keys()) {
    if (!knownFlags.has(name)) throw new Error(`unknown option --${name}\n${usage}`);
  }
  if (flags.has('help')) throw new Error(usage);
  return flags;
}

export function parseOptions(argv: readonly string[]): BenchOptions {
  const flags = readFlags(argv);
  const quick = flags.has('quick');
  const text = (name: string): string | undefined => {
    const value = flags.get(name);
    return typeof value === 'string' ? value : undefined;
  };
  const list = (name: string): string[] | undefined =>
    text(name)
      ?.split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) {
      throw new Error(`--${name} must be a number in [${min}, ${max}]`);
    }
    return value;
  };

  const servers = (list('servers') ?? [...defaultServerKinds]).map((name) => {
    if (!(serverKinds as readonly string[]).includes(name)) throw new Error(`unknown server ${name}\n${usage}`);
    return name as ServerKind;
  });
  const concurrency = (list('concurrency') ?? (quick ? ['16'] : ['1', '16', '64'])).map((value) => {
    const level = Number(value);
    if (!Number.isInteger(level) || level < 1 || level > concurrencyMax) {
      throw new Error(`bad concurrency ${value}`);
    }
    return level;
  });
  return {
    quick,
    big: flags.has('big'),
    scenarios: list('scenarios') ?? [],
    concurrency,
    durationS: number('duration', quick ? 1 : 3, 0.1, 600),
    warmupS: number('warmup', quick ? 0.3 : 1, 0, 600),
    preload: Math.round(number('preload', quick ? 10_000 : 100_000, 1_000, countMax)),
    rounds: Math.round(number('rounds', 2, 1, 10)),
    servers,
    report: reportName(text('report') ?? 'latest'),
  };
}

/** A plain file name, so the report stays in bench/results/. */
function reportName(name: string): string {
  if (!/^[\w.-]+$/.test(name) || name.startsWith('.')) throw new Error(`--report must be a plain file name\n${usage}`);
  return name;
}
