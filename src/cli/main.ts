// The `cerulean` command: `cerulean [serve] [options]` runs the server (the default); every other
// first word names a tool command of src/cli/commands/. Failures are one line on stderr and a
// non-zero exit: 2 for usage errors, 1 otherwise.
import { Command, CommanderError } from 'commander';
import { usage as serverUsage } from '../config.js';
import { serve } from '../main.js';
import { CliError } from './command.js';
import { commands } from './commands/index.js';

const serveName = 'serve';

export async function runCli(argv: readonly string[]): Promise<void> {
  const [first] = argv;
  if (first === undefined || (first.startsWith('-') && first !== '--help' && first !== '-h')) return serve(argv);
  if (first === serveName) return serve(argv.slice(1));
  const program = buildProgram();
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(
      `${program.helpInformation()}\n${serverUsage.replace(/^Usage: cerulean \[options\]/, 'Server options (cerulean [serve] [options]):')}\n`,
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
    .description('An Azure Table Storage server, and tools to move data in and out of it.')
    .exitOverride()
    .configureOutput({ outputError: (text, write) => write(`cerulean: ${text.replace(/^error: /, '')}`) })
    .helpCommand(false);
  program.command(serveName).description('run the server (the default; cerulean serve --help lists its options)');
  for (const command of commands) command.register(program);
  return program;
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
