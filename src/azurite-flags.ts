// Azurite's command line, accepted beside ours so that switching emulators changes only a command or
// an image name (docs/switching-from-azurite.md). Each Azurite flag becomes the flag of ours with its
// meaning, or, when it means nothing here, is accepted and named in one log line at start-up.
import { UsageError } from './config.js';

export interface AzuriteFlag {
  /** Its spellings, e.g. `-l` and `--location`. */
  readonly names: readonly string[];
  /** The value's placeholder; undefined: a switch. */
  readonly value?: string;
  /** Our flags it becomes; a value it takes follows them. */
  readonly ours?: readonly string[];
  /** Why it changes nothing here (for the log line and the usage text). */
  readonly inert?: string;
}

export const azuriteFlags: readonly AzuriteFlag[] = [
  { names: ['--blobHost'], value: '<address>', ours: ['--blob-host'] },
  { names: ['--blobPort'], value: '<number>', ours: ['--blob-port'] },
  { names: ['--queueHost'], value: '<address>', ours: ['--queue-host'] },
  { names: ['--queuePort'], value: '<number>', ours: ['--queue-port'] },
  { names: ['--tableHost'], value: '<address>', ours: ['--table-host'] },
  { names: ['--tablePort'], value: '<number>', ours: ['--port'] },
  { names: ['-l', '--location'], value: '<dir>', ours: ['--location'] },
  { names: ['--inMemoryPersistence'], ours: ['--in-memory'] },
  // Azurite's silent mode drops the access log; ours logs requests only when they fail, so keep warnings.
  { names: ['-s', '--silent'], ours: ['--log-level', 'warn'] },
  { names: ['--cert'], value: '<file>', ours: ['--cert'] },
  { names: ['--key'], value: '<file>', ours: ['--key'] },
  { names: ['--pwd'], value: '<password>', ours: ['--cert-password'] },
  { names: ['-d', '--debug'], value: '<file>', inert: 'the log goes to stderr (--log-level debug for detail)' },
  { names: ['-L', '--loose'], inert: "what is not supported gets Azure's error answer" },
  { names: ['--skipApiVersionCheck'], inert: 'every date-shaped x-ms-version is accepted' },
  {
    names: ['--disableProductStyleUrl'],
    inert: "the account comes from the host only when the host's first label names a known account",
  },
  { names: ['--disableTelemetry'], inert: 'no telemetry is collected' },
  { names: ['--extentMemoryLimit'], value: '<megabytes>', inert: 'in-memory data is not kept in extents' },
];

export interface TranslatedArgs {
  /** The command line in our flags. */
  readonly argv: readonly string[];
  /** The Azurite flags given that change nothing here, each with why: for one log line. */
  readonly inert: readonly string[];
}

/** Rewrites Azurite's flags (`--blobPort 10000`, `--blobPort=10000`, `-l dir`) into ours; others pass. */
export function translateAzuriteArgs(argv: readonly string[]): TranslatedArgs {
  const out: string[] = [];
  const inert: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const equals = word.startsWith('--') ? word.indexOf('=') : -1;
    const name = equals < 0 ? word : word.slice(0, equals);
    const flag = azuriteFlags.find((candidate) => candidate.names.includes(name));
    if (flag === undefined) {
      out.push(word);
      continue;
    }
    let value: string | undefined;
    if (flag.value !== undefined) {
      value = equals < 0 ? argv[++i] : word.slice(equals + 1);
      if (value === undefined) throw new UsageError(`${name} needs a value ${flag.value}`);
    } else if (equals >= 0) {
      throw new UsageError(`${name} takes no value`);
    }
    // Azurite knows one OAuth level.
    if (name === '--oauth' && value!.toLowerCase() !== 'basic')
      throw new UsageError(`--oauth must be basic, not '${value}'`);
    if (flag.inert !== undefined) inert.push(`${name} (${flag.inert})`);
    else out.push(...flag.ours!, ...(value === undefined ? [] : [value]));
  }
  return { argv: out, inert };
}

/** The usage text's lines for Azurite's flags. */
export function azuriteUsage(): string[] {
  return azuriteFlags.map((flag) => {
    const left = `  ${flag.names.join(', ')}${flag.value === undefined ? '' : ` ${flag.value}`}`;
    const right = flag.inert === undefined ? `as ${flag.ours!.join(' ')}` : `accepted, no effect: ${flag.inert}`;
    return `${left.padEnd(31)} ${right}`;
  });
}
