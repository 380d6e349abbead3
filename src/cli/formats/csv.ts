// CSV records (arrays of cells) <-> rows, typed and plain. Pure: the CSV text itself is read and
// written by csv-stringify and read by csv-records.ts; this module only knows which cell means what.
//
// Typed CSV is Azure Storage Explorer's `.typed.csv`, as we understand it from its exports and
// import dialog (no published specification):
//   - the header names the columns; `PartitionKey`, `RowKey` and `Timestamp` come first, then
//     every property column `Name` is followed by a column `Name@type`;
//   - a `Name@type` cell holds the EDM type of that row's value: `Edm.String`, `Edm.Int32`,
//     `Edm.Int64`, `Edm.Double`, `Edm.Boolean`, `Edm.DateTime`, `Edm.Guid` or `Edm.Binary`;
//   - a row that lacks the property has both cells empty, so an empty string is told apart
//     from a missing property by its type cell (`Edm.String`);
//   - values are text: DateTime ISO 8601 (`2024-05-01T10:00:00.000Z`), Boolean `true`/`false`,
//     Binary base64, Double a decimal number or `NaN`, `Infinity`, `-Infinity`.
// Reading is lenient where hand-written files differ: columns may come in any order, a value
// column without an `@type` column holds strings, a value without a type in its type cell is a
// string, type names may omit `Edm.` and use any case, `PartitionKey@type`/`RowKey@type` may be
// present (must then be Edm.String), and `Timestamp` (with its `@type`) is read but not imported.
//
// Plain CSV has the same header without `@type` columns and drops the types: every value is
// read back as a string, and an empty cell means the property is absent.
import { type Row, RowError, type TypedValue, canonicalValue, parseTypeName } from './row.js';

const typeSuffix = '@type';
const keyColumns = ['PartitionKey', 'RowKey', 'Timestamp'] as const;

/** The header for rows whose custom properties are `names` (in order of first appearance). */
export function csvHeader(names: readonly string[], typed: boolean): string[] {
  const header: string[] = [...keyColumns];
  for (const name of names) {
    header.push(name);
    if (typed) header.push(name + typeSuffix);
  }
  return header;
}

/** The cells of `row` under csvHeader(names, typed). */
export function csvRecord(row: Row, names: readonly string[], typed: boolean): string[] {
  const cells = [row.partitionKey ?? '', row.rowKey ?? '', row.timestamp ?? ''];
  for (const name of names) {
    const property = row.properties.get(name);
    cells.push(property?.value ?? '');
    if (typed) cells.push(property?.type ?? '');
  }
  return cells;
}

/** A bad header: the whole file cannot be read (unlike a bad row, which is only rejected). */
export class CsvHeaderError extends Error {
  override readonly name = 'CsvHeaderError';
}

interface ValueColumn {
  readonly name: string;
  readonly index: number;
  /** The index of its `@type` column, if the file has one. */
  readonly typeIndex: number | undefined;
}

/** Returns a function that turns each record under `header` into a row, or throws RowError. */
export function csvRowReader(header: readonly string[], typed: boolean): (record: readonly string[]) => Row {
  const indexOf = new Map<string, number>();
  header.forEach((column, index) => {
    if (indexOf.has(column)) throw new CsvHeaderError(`the header names column ${JSON.stringify(column)} twice`);
    indexOf.set(column, index);
  });
  const columns: ValueColumn[] = [];
  for (const [column, index] of indexOf) {
    if (typed && column.endsWith(typeSuffix)) {
      const base = column.slice(0, -typeSuffix.length);
      if (!indexOf.has(base))
        throw new CsvHeaderError(`column ${JSON.stringify(column)} has no column ${JSON.stringify(base)}`);
      continue;
    }
    if ((keyColumns as readonly string[]).includes(column)) continue;
    if (column === '') throw new CsvHeaderError(`column ${index + 1} has no name`);
    columns.push({ name: column, index, typeIndex: typed ? indexOf.get(column + typeSuffix) : undefined });
  }
  for (const key of ['PartitionKey', 'RowKey']) {
    if (!indexOf.has(key)) throw new CsvHeaderError(`the header has no ${key} column`);
  }
  const keyTypeIndex = (key: string) => (typed ? indexOf.get(key + typeSuffix) : undefined);
  const partitionKey = { index: indexOf.get('PartitionKey')!, typeIndex: keyTypeIndex('PartitionKey') };
  const rowKey = { index: indexOf.get('RowKey')!, typeIndex: keyTypeIndex('RowKey') };
  const timestampIndex = indexOf.get('Timestamp');

  return (record) => {
    if (record.length !== header.length) {
      throw new RowError(`the row has ${record.length} cells, the header ${header.length}`);
    }
    const properties = new Map<string, TypedValue>();
    for (const column of columns) {
      const text = record[column.index]!;
      const typeText = column.typeIndex === undefined ? '' : record[column.typeIndex]!;
      if (typeText === '') {
        if (text !== '') properties.set(column.name, { type: 'Edm.String', value: text });
        continue;
      }
      const type = parseTypeName(typeText);
      if (type === undefined)
        throw new RowError(`unknown type ${JSON.stringify(typeText)} for ${JSON.stringify(column.name)}`);
      properties.set(column.name, { type, value: canonicalValue(type, text, column.name) });
    }
    return {
      partitionKey: keyCell(record, partitionKey, 'PartitionKey'),
      rowKey: keyCell(record, rowKey, 'RowKey'),
      timestamp: timestampIndex === undefined ? undefined : record[timestampIndex] || undefined,
      properties,
    };
  };
}

function keyCell(
  record: readonly string[],
  column: { index: number; typeIndex: number | undefined },
  which: string,
): string {
  const typeText = column.typeIndex === undefined ? '' : record[column.typeIndex]!;
  if (typeText !== '' && parseTypeName(typeText) !== 'Edm.String') {
    throw new RowError(`${which} must be of type Edm.String, not ${JSON.stringify(typeText)}`);
  }
  return record[column.index]!;
}
