// What a command reads from stdin when its argument is missing or `-`.
import { CliError } from './command.js';

/** All of stdin as UTF-8; a usage error naming `what` when stdin is a terminal (nothing piped in). */
export async function readStdin(what: string): Promise<string> {
  if (process.stdin.isTTY) throw new CliError(`give ${what} as an argument or on stdin`, 2);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
