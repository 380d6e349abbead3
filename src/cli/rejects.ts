// The rejects file: one JSON line per row that could not be stored, with the reason, so it can be
// fixed and imported again. Created only when the first row is rejected. A file of that name from
// an earlier run is never overwritten or deleted (it may be the only record of those rows): the
// command refuses to start, unless it resumes that run, which appends.
import fs from 'node:fs';
import { CliError } from './command.js';

export interface Reject {
  /** The line number in the input file; absent for copies. */
  readonly line?: number;
  readonly reason: string;
  /** What the input held: the line's text, the CSV cells, or the entity as a JSON line. */
  readonly input: unknown;
}

export class RejectsFile {
  private fd: number | undefined;
  count = 0;

  /** `append`: add to the file of an earlier run (a resumed one) instead of refusing to start. */
  constructor(
    readonly file: string,
    private readonly append = false,
  ) {
    if (!append && fs.existsSync(file)) {
      throw new CliError(
        `the rejects file ${file} exists (from an earlier run?): move it away, or name another with --rejects`,
        2,
      );
    }
  }

  add(reject: Reject): void {
    // 'wx': should a file of that name have appeared since the start, fail rather than overwrite it.
    this.fd ??= fs.openSync(this.file, this.append ? 'a' : 'wx');
    fs.writeSync(this.fd, `${JSON.stringify(reject)}\n`);
    this.count++;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
