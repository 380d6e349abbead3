// The `cerulean` command: `cerulean [serve] [options]` runs the server (the default); every other
// first word names a tool command of src/cli/commands/. Failures are one line on stderr and a
// non-zero exit: 2 for usage errors, 1 otherwise.
import { Command, CommanderError } from 'commander';
import { serverUsage } from '../config.js';
import { serve } from '../main.js';
import { CliError } from './command.js';
import { commands } from './commands/index.js';
import { packageVersion } from './endpoint.js';

const serveName = 'serve';

export async function runCli(argv: readonly string[]): Promise<void> {
  const [first] = argv;
  if (first === '--version' || first === '-V') {
    process.stdout.write(`cerulean ${packageVersion()}\n`);
    return;
  }
  // `cerulean -c X tables`: -c is no server option, and the server would print its whole usage.
  const toolOption = first === '-c' || first === '--connection-string';
  const misplaced = toolOption ? argv.find((word) => commands.some((command) => command.name === word)) : undefined;
  if (misplaced !== undefined) {
    process.stderr.write(
      `cerulean: options go after the command: cerulean ${misplaced} [options]\n${hint(misplaced)}\n`,
    );
    process.exitCode = 2;
    return;
  }
  if (first === undefined || (first.startsWith('-') && first !== '--help' && first !== '-h')) return serve(argv);
  if (first === serveName) return serve(argv.slice(1));
  endQuietlyWhenStdoutCloses();
  const program = buildProgram();
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(
      `${program.helpInformation()}\n${serverUsage().replace(/^Usage: cerulean \[serve\] \[options\]/, 'Server options (cerulean [serve] [options]):')}\n`,
    );
    return;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    process.exitCode = exitCodeOf(error, first);
  }
}

function buildProgram(): Command {
  const program = new Command('cerulean')
    .usage('[serve] [options] | <command> [options]')
    .description(
      'An Azure Storage server (Table, Queue and Blob services), and tools for any account (Azure, Azurite, ' +
        'Cerulean): copy or back up its tables, queues and blobs; export and import entities; list, upload, ' +
        'download and sync blobs; peek at and move messages.',
    )
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`cerulean: ${text.replace(/^error: /, '')}`) })
    .showHelpAfterError(hint())
    .helpCommand(false);
  program.command(serveName).description('run the server (the default; cerulean serve --help lists its options)');
  for (const command of commands) command.register(program);
  for (const command of program.commands) command.showHelpAfterError(hint(command.name()));
  return program;
}

/**
 * The reader of a tool's stdout went away (`cerulean copy --help | head -1`): end at once with
 * status 0 and nothing on stderr, as a Unix tool killed by SIGPIPE ends silently. A write to the
 * closed pipe fails as an 'error' event of stdout, which no caller's try/catch sees. The server
 * keeps the default (its log is not its result).
 */
function endQuietlyWhenStdoutCloses(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
}

/** The line after a usage error, instead of the whole help. */
function hint(command?: string): string {
  return `(cerulean ${command ?? '<command>'} --help for usage)`;
}

/** Reports `error` on stderr (unless commander already did) and returns the exit code. */
function exitCodeOf(error: unknown, command: string): number {
  if (error instanceof CommanderError) {
    if (
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.help' ||
      error.code === 'commander.version'
    )
      return 0;
    return 2; // commander printed the usage error
  }
  // The reader of stdout went away (`cerulean export T | head`): stop quietly, as Unix tools do.
  if ((error as NodeJS.ErrnoException).code === 'EPIPE') return 0;
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`cerulean ${command}: ${message.split('\n')[0]}\n`);
  return error instanceof CliError ? error.exitCode : 1;
}
