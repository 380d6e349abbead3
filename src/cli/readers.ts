// Rows from an input file, streamed: JSON lines or CSV (typed or plain). A row that cannot be read
// comes as a RowError with its line, so the import goes on with the next one.
import fs from 'node:fs';
import { createInterface } from 'node:readline';
import { Transform } from 'node:stream';
import { CliError } from './command.js';
import { CsvHeaderError, csvRowReader } from './formats/csv.js';
import { csvRecords } from './formats/csv-records.js';
import type { FormatName } from './formats/index.js';
import { decodeJsonLine } from './formats/jsonl.js';
import { type Row, RowError } from './formats/row.js';

export interface InputRow {
  readonly row: Row | RowError;
  /** The line number in the file (for CSV, the line where the record starts). */
  readonly line: number;
  /** The line's text or the record's cells, for the rejects file. */
  readonly input: unknown;
}

/** Streams `file`; `onBytes` learns how far into the file reading got (for progress). */
export async function* readRows(
  file: string,
  format: FormatName,
  onBytes: (bytes: number) => void,
): AsyncGenerator<InputRow> {
  let bytes = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      onBytes(bytes);
      done(null, chunk);
    },
  });
  const source = fs.createReadStream(file).on('error', (error) => counter.destroy(error));
  try {
    const input = source.pipe(counter);
    yield* format === 'jsonl' ? jsonRows(input) : csvRows(input, format === 'typed-csv');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'EACCES')
      throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
    throw error;
  } finally {
    source.destroy();
  }
}

async function* jsonRows(input: NodeJS.ReadableStream): AsyncGenerator<InputRow> {
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    yield { row: attempt(() => decodeJsonLine(text)), line, input: text };
  }
}

async function* csvRows(input: NodeJS.ReadableStream, typed: boolean): AsyncGenerator<InputRow> {
  let header: readonly string[] | undefined;
  let reader: ((record: readonly string[]) => Row) | undefined;
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const { line, cells, error, text } of csvRecords(lines, () => header?.length)) {
    if (cells === undefined) {
      // A broken header is the whole file's problem; a broken record only its own.
      if (reader === undefined) throw new CliError(`bad header (line ${line}): ${error}`);
      yield { row: new RowError(`malformed CSV: ${error}`), line, input: text };
      continue;
    }
    if (reader === undefined) {
      try {
        reader = csvRowReader(cells, typed);
        header = cells;
      } catch (headerError) {
        if (headerError instanceof CsvHeaderError) throw new CliError(`bad header: ${headerError.message}`);
        throw headerError;
      }
      continue;
    }
    const read = reader;
    yield { row: attempt(() => read(cells)), line, input: cells };
  }
}

/** The row `read` returns, or the RowError it throws (any other error is a bug and propagates). */
function attempt(read: () => Row): Row | RowError {
  try {
    return read();
  } catch (error) {
    if (error instanceof RowError) return error;
    throw error;
  }
}
