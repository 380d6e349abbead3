// What every subcommand is: a name and a function that adds it to the program. The table of
// commands is src/cli/commands/index.ts; a new command is one module plus one line there.
import { type Command, Option } from 'commander';
import { connectionStringVariable, defaultEndpointUrl } from './endpoint.js';

export interface CliCommand {
  readonly name: string;
  /** Adds `cerulean NAME`, its options and its action to `program`. */
  register(program: Command): void;
}

/** A failure to report as one line on stderr; `exitCode` 2 for usage errors, else 1. */
export class CliError extends Error {
  override readonly name = 'CliError';
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** `--connection-string`: where the tables are. */
export function connectionOption(): Option {
  return new Option(
    '-c, --connection-string <string>',
    `connection string or SAS URL (env ${connectionStringVariable}; default the local server, ${defaultEndpointUrl})`,
  );
}

/** `--location`: a data directory the command reads directly (same default as the server). */
export function locationOption(what: string): Option {
  return new Option('--location <dir>', `${what} (env CERULEAN_LOCATION, default ./data)`);
}

export function locationOf(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return given ?? env['CERULEAN_LOCATION'] ?? './data';
}

/** A whole number of at least `min`, or a usage error naming the flag. */
export function wholeNumber(flag: string, min: number): (text: string) => number {
  return (text) => {
    const value = Number(text);
    if (!/^\d+$/.test(text) || value < min)
      throw new CliError(`${flag} must be a whole number from ${min}, not '${text}'`, 2);
    return value;
  };
}

/** "12,345" */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * `cerulean NAME <subcommand>`: a command that only groups subcommands (`queue`, `blobs`); a missing
 * or unknown subcommand is a usage error naming them. Add the subcommands, then call
 * `finishCommandGroup`.
 */
export function commandGroup(program: Command, name: string, description: string, subcommands: string): Command {
  return program
    .command(name)
    .description(description)
    .helpCommand(false)
    .showHelpAfterError(`(cerulean ${name} --help for usage)`)
    .allowExcessArguments(true)
    .allowUnknownOption(true) // 'cerulean queue bogus -c …': name the unknown subcommand, not -c
    .action((_options: unknown, command: Command) => {
      const [word] = command.args;
      const which = word === undefined ? 'give a subcommand' : `unknown subcommand '${word}'`;
      throw new CliError(`${which}: ${subcommands}`, 2);
    });
}

/** Each subcommand's usage errors end with the line that names its help. */
export function finishCommandGroup(group: Command): void {
  for (const sub of group.commands) sub.showHelpAfterError(`(cerulean ${group.name()} ${sub.name()} --help for usage)`);
}
