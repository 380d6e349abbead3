// `cerulean faults show|set|clear`: the fault injection rules of a running server (/_faults),
// read and changed with a request signed by the account key of -c (the server wants Shared Key).
import fs from 'node:fs';
import type { Command } from 'commander';
import { adminRequest } from '../admin.js';
import { type CliCommand, CliError, connectionOption } from '../command.js';
import { resolveEndpoint } from '../endpoint.js';

interface FaultsOptions {
  connectionString?: string;
}

const actions = ['show', 'set', 'clear'] as const;

export const faultsCommand: CliCommand = {
  name: 'faults',
  register(program: Command) {
    program
      .command('faults')
      .description("show, set or clear a running server's fault injection rules (GET/PUT/DELETE /_faults)")
      .argument('<action>', 'show | set | clear')
      .argument('[rules]', 'for set: a JSON file of rules, "-" for stdin, or the JSON itself')
      .addOption(connectionOption())
      .addHelpText(
        'after',
        '\nThe request is signed with the account key of -c (default the development account).\n' +
          '\nExamples:\n  cerulean faults set \'{"rules":[{"kind":"serverBusy","every":10,"operations":["InsertEntity"]}]}\'\n' +
          '  cerulean faults show\n  cerulean faults clear\n',
      )
      .action((action: string, rules: string | undefined, options: FaultsOptions) => faults(action, rules, options));
  },
};

async function faults(action: string, rules: string | undefined, options: FaultsOptions): Promise<void> {
  if (!(actions as readonly string[]).includes(action))
    throw new CliError(`unknown action '${action}': show, set or clear`, 2);
  if ((action === 'set') !== (rules !== undefined)) {
    throw new CliError(
      action === 'set' ? 'faults set needs the rules (a file, "-" or JSON)' : `faults ${action} takes no rules`,
      2,
    );
  }
  const target = resolveEndpoint(options.connectionString).admin;
  const method = action === 'show' ? 'GET' : action === 'set' ? 'PUT' : 'DELETE';
  const body = rules === undefined ? undefined : readRules(rules);
  const answer = await adminRequest(target, {
    method,
    path: '/_faults',
    keyRequired: true,
    ...(body !== undefined && { body }),
  });
  process.stdout.write(`${JSON.stringify(JSON.parse(answer), null, 2)}\n`);
}

function readRules(given: string): string {
  if (given.trimStart().startsWith('{')) return given;
  try {
    return fs.readFileSync(given === '-' ? 0 : given, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${given}: ${(error as Error).message}`);
  }
}
