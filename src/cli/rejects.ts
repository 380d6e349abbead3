// The rejects file: one JSON line per row that could not be stored, with the reason, so it can be
// fixed and imported again. Created only when the first row is rejected.
import fs from 'node:fs';

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

  constructor(readonly file: string) {}

  add(reject: Reject): void {
    this.fd ??= fs.openSync(this.file, 'w');
    fs.writeSync(this.fd, `${JSON.stringify(reject)}\n`);
    this.count++;
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
}
