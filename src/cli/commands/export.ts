// cerulean export <table>: a table or a query result to JSON lines, typed CSV or CSV, page by page.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { type Command, Option } from 'commander';
import { stringify } from 'csv-stringify';
import { type CliCommand, connectionOption, formatCount } from '../command.js';
import { resolveEndpoint } from '../endpoint.js';
import { csvHeader, csvRecord } from '../formats/csv.js';
import { type FormatName, chooseFormat, formatNames } from '../formats/index.js';
import { decodeJsonLine, encodeJsonLine } from '../formats/jsonl.js';
import type { Row } from '../formats/row.js';
import { Interruption, interruptedError } from '../interrupt.js';
import { startProgress } from '../progress.js';
import { scanPages } from '../scan.js';
import { tableError } from '../service-errors.js';

interface ExportOptions {
  out?: string;
  format?: string;
  filter?: string;
  select?: string;
  connectionString?: string;
}

export const exportCommand: CliCommand = {
  name: 'export',
  register(program: Command) {
    program
      .command('export')
      .description('write a table, or the entities a filter selects, to a file (or stdout)')
      .argument('<table>', 'table name')
      .option('-o, --out <file>', 'output file (default stdout); written whole or not at all')
      .addOption(
        new Option('-f, --format <format>', 'default from --out: .typed.csv, .csv, else jsonl').choices(formatNames),
      )
      .option('--filter <filter>', 'OData $filter, e.g. "PartitionKey eq \'a\'"')
      .option('--select <names>', 'comma-separated properties to keep, e.g. Name,Age (the keys are always kept)')
      .addOption(connectionOption())
      .addHelpText('after', '\nExample:\n  cerulean export People --out people.typed.csv\n')
      .action((table: string, options: ExportOptions) => exportTable(table, options));
  },
};

async function exportTable(table: string, options: ExportOptions): Promise<void> {
  const format = chooseFormat(options.format, options.out);
  const select = selectWithKeys(options.select);
  const client = resolveEndpoint(options.connectionString).tableClient(table);
  const interruption = new Interruption(`export ${table}`);
  // Pages stop coming once Ctrl-C was pressed: the export ends early, and says so below.
  const pages = untilInterrupted(scanPages(client, { filter: options.filter, select }), interruption);
  const progress = startProgress(`export ${table}`);
  // A file is written beside its final name and renamed at the end: never a half export under it.
  const partial = options.out === undefined ? undefined : `${options.out}.partial`;
  // 'wx': a .partial file found here is someone else's (another export running?): refuse, keep it.
  const out = partial === undefined ? process.stdout : fs.createWriteStream(partial, { flags: 'wx' });
  let opened = false;
  if (partial !== undefined) out.once('open', () => (opened = true));
  let exported = 0;
  const onRows = (n: number) => {
    exported += n;
    progress.update(n);
  };
  try {
    if (format === 'jsonl') {
      for await (const page of pages) {
        await write(out, page.map((row) => encodeJsonLine(row) + '\n').join(''));
        onRows(page.length);
      }
    } else {
      await writeCsv(out, pages, format, onRows);
    }
    if (partial !== undefined) await closeStream(out as fs.WriteStream);
    if (partial !== undefined && !interruption.requested) fs.renameSync(partial, options.out!);
  } catch (error) {
    throw tableError(error, table);
  } finally {
    interruption.dispose();
    // Only the file this run opened (and did not rename), never one it found.
    if (partial !== undefined && opened && fs.existsSync(partial)) {
      (out as fs.WriteStream).destroy();
      fs.rmSync(partial, { force: true });
    }
  }
  if (interruption.requested) {
    const where =
      options.out === undefined
        ? 'written to stdout'
        : `read; nothing written to ${options.out} (its partial file removed)`;
    throw interruptedError(`${formatCount(exported)} entities ${where}`);
  }
  process.stderr.write(`export ${table}: ${progress.finish()}${options.out ? ` to ${options.out}` : ''}\n`);
}

async function* untilInterrupted<T>(pages: AsyncIterable<T>, interruption: Interruption): AsyncGenerator<T> {
  for await (const page of pages) {
    if (interruption.requested) return;
    yield page;
  }
}

function closeStream(stream: fs.WriteStream): Promise<void> {
  return new Promise<void>((resolve, reject) =>
    stream.end((error?: Error | null) => (error ? reject(error) : resolve())),
  );
}

/**
 * The properties to ask for: those named, plus PartitionKey and RowKey, always. An export without
 * its keys cannot be imported again (a CSV would even bring its rows back under empty keys).
 */
function selectWithKeys(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  return [...new Set(['PartitionKey', 'RowKey', ...names])];
}

/**
 * A CSV header names every property of every row, so rows are first spooled as JSON lines to a
 * temporary file while the names are collected; then the CSV is written from the spool. Memory
 * stays constant (the names aside), and the table is read once, as one consistent pass.
 */
async function writeCsv(
  out: NodeJS.WritableStream,
  pages: AsyncIterable<Row[]>,
  format: Exclude<FormatName, 'jsonl'>,
  onRows: (n: number) => void,
): Promise<void> {
  const spoolDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cerulean-export-'));
  try {
    const spoolFile = path.join(spoolDir, 'rows.jsonl');
    const spool = fs.createWriteStream(spoolFile);
    const names = new Set<string>();
    for await (const page of pages) {
      for (const row of page) for (const name of row.properties.keys()) names.add(name);
      await write(spool, page.map((row) => encodeJsonLine(row) + '\n').join(''));
      onRows(page.length);
    }
    await new Promise<void>((resolve, reject) =>
      spool.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );

    const typed = format === 'typed-csv';
    const columns = [...names];
    const csv = stringify({ eof: true });
    csv.pipe(out, { end: false });
    const drained = once(csv, 'end');
    const csvWrite = async (record: string[]) => {
      if (!csv.write(record)) await once(csv, 'drain');
    };
    await csvWrite(csvHeader(columns, typed));
    for await (const line of createInterface({ input: fs.createReadStream(spoolFile), crlfDelay: Infinity })) {
      await csvWrite(csvRecord(decodeJsonLine(line), columns, typed));
    }
    csv.end();
    await drained;
  } finally {
    fs.rmSync(spoolDir, { recursive: true, force: true });
  }
}

async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (text !== '' && !out.write(text)) await once(out, 'drain');
}
