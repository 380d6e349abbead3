// Ctrl-C during a long command: the first one asks the command to stop at the next safe point
// (after the transactions under way), so it can say what was done; a second one stops at once.
import { CliError } from './command.js';

/** The exit status of a process stopped by SIGINT, as shells report it. */
export const interruptedExitCode = 130;

export class Interruption {
  requested = false;

  constructor(private readonly label: string) {
    process.on('SIGINT', this.onSignal);
  }

  private readonly onSignal = (): void => {
    if (this.requested) {
      process.stderr.write(`\n${this.label}: interrupted again: stopping now, without a summary\n`);
      process.exit(interruptedExitCode);
    }
    this.requested = true;
    process.stderr.write(
      `\n${this.label}: interrupted: finishing the requests under way (Ctrl-C again stops at once)\n`,
    );
  };

  /** Stops listening (the command is done). */
  dispose(): void {
    process.off('SIGINT', this.onSignal);
  }
}

/** The error that ends an interrupted command, after it has said what it did. */
export function interruptedError(summary: string): CliError {
  return new CliError(`interrupted: ${summary}`, interruptedExitCode);
}
