// CSV text to records, line by line, such that a broken quote costs one line, never the rest of
// the file: every line ends up in a record or in a rejected line. A quoted field may span lines
// (RFC 4180), but a record that is still open after `recordCharsMax` characters or at the end of
// the file, or that spans lines and then has another number of cells than the header, started
// with a stray quote: its first line is rejected and reading starts again at the line after it.
// Lines are rejoined with "\n" inside quoted fields. A quote inside an unquoted field is kept as
// text (lenient, as hand-written files have them); text after a closing quote is an error.

/** Far above the largest entity (1 MiB, base64 included): beyond it no record is still open. */
export const recordCharsMax = 4 * 1024 * 1024;

export interface CsvRecord {
  /** The line where the record starts (1-based). */
  readonly line: number;
  /** The cells, or undefined when the record could not be read (`error` says why). */
  readonly cells: string[] | undefined;
  readonly error: string | undefined;
  /** The record's text, for the rejects file. */
  readonly text: string;
}

interface Line {
  readonly text: string;
  readonly line: number;
}

type State = 'start' | 'unquoted' | 'quoted' | 'closed';

/** One record's cells, fed a line at a time. */
class RecordParser {
  readonly cells: string[] = [];
  private field = '';
  private state: State = 'start';

  /** 'complete', 'open' (inside a quoted field at the end of the line), or an error message. */
  feed(text: string): 'complete' | 'open' | { error: string } {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (this.state === 'quoted') {
        if (c !== '"') this.field += c;
        else if (text[i + 1] === '"') {
          this.field += '"';
          i++;
        } else this.state = 'closed';
      } else if (c === ',') {
        this.cells.push(this.field);
        this.field = '';
        this.state = 'start';
      } else if (this.state === 'closed') {
        return { error: `text after a closing quote at column ${i + 1}` };
      } else if (this.state === 'start' && c === '"') {
        this.state = 'quoted';
      } else {
        this.field += c;
        this.state = 'unquoted';
      }
    }
    if (this.state === 'quoted') {
      this.field += '\n';
      return 'open';
    }
    this.cells.push(this.field);
    return 'complete';
  }
}

/**
 * The records of `lines` (a file's lines without their ends). `cellsExpected` is asked after each
 * record: the header's length once the header is read.
 */
export async function* csvRecords(
  lines: AsyncIterable<string>,
  cellsExpected: () => number | undefined,
): AsyncGenerator<CsvRecord> {
  const iterator = lines[Symbol.asyncIterator]();
  let lineNumber = 0;
  const pending: Line[] = []; // read ahead, to read again after a rejected first line
  const next = async (): Promise<Line | undefined> => {
    const queued = pending.shift();
    if (queued !== undefined) return queued;
    const result = await iterator.next();
    if (result.done) return undefined;
    lineNumber++;
    return { text: lineNumber === 1 ? result.value.replace(/^\ufeff/, '') : result.value, line: lineNumber };
  };
  for (;;) {
    const first = await next();
    if (first === undefined) return;
    if (first.text === '') continue; // blank lines carry no record
    const parser = new RecordParser();
    const used: Line[] = [first];
    let chars = first.text.length;
    let outcome = parser.feed(first.text);
    while (outcome === 'open' && chars <= recordCharsMax) {
      const line = await next();
      if (line === undefined) break;
      used.push(line);
      chars += line.text.length;
      outcome = parser.feed(line.text);
    }
    const expected = cellsExpected();
    const strayQuote =
      outcome === 'open' ||
      (used.length > 1 && (outcome !== 'complete' || (expected !== undefined && parser.cells.length !== expected)));
    if (strayQuote) {
      pending.unshift(...used.slice(1));
      yield { line: first.line, cells: undefined, error: 'a quote that is never closed', text: first.text };
    } else if (outcome !== 'complete' && outcome !== 'open') {
      yield { line: first.line, cells: undefined, error: outcome.error, text: first.text };
    } else {
      yield { line: first.line, cells: parser.cells, error: undefined, text: used.map((line) => line.text).join('\n') };
    }
  }
}
