// Export and import files: Storage Explorer's typed CSV and JSON lines.
//
// Typed CSV, as Storage Explorer writes it (`Table.typed.csv`): RFC 4180 (comma separated, fields
// with `,` `"` or line breaks in double quotes, `"` doubled, CRLF rows). The header is
// `PartitionKey,RowKey,Timestamp`, then for each property `Name,Name@type`. In a row, the `@type`
// cell names the type of that entity's property (`Edm.Int32`, …) and is empty when the entity has
// no such property. On import the type may also be written without `Edm.` (newer Storage Explorer
// versions write `Int32`), and an empty type beside a non-empty value takes the column's type (the
// first non-empty type in that column; newer versions may annotate only the first row), or String.
// Timestamp is informative: the service sets it on write. Values are the canonical texts of
// edm.ts: DateTime in ISO 8601 with 7 fractional digits, Binary in base64, Double NaN/Infinity.
//
// JSON lines: one entity per line, as the REST API's JSON: `{"PartitionKey":…,"RowKey":…,
// "Timestamp":…,"Count@odata.type":"Edm.Int64","Count":"5",…}` (every non-string type annotated).
import {
  entityFromWire,
  entityToWire,
  parseWireJson,
  invalidReason,
  isEdmType,
  keyNames,
  type EdmType,
  type Entity,
  type Property,
} from './edm.js';

export type FileFormat = 'typed-csv' | 'jsonl';

export const fileFormats: Record<FileFormat, { label: string; extension: string; mime: string }> = {
  'typed-csv': { label: 'typed CSV (Storage Explorer)', extension: '.typed.csv', mime: 'text/csv' },
  jsonl: { label: 'JSON lines', extension: '.jsonl', mime: 'application/x-ndjson' },
};

/**
 * Builds an export page by page: each page becomes file bytes at once, handed to the browser as a
 * Blob (which Chromium keeps in its blob store, on disk when large), so the page's own memory holds
 * one page of entities at a time whatever the size of the result. A typed CSV header names every
 * property seen in any page, so rows of earlier pages get empty cells for columns that appeared
 * later: for those pages the writer keeps each row's byte length (not its text) and splices the
 * padding in by slicing the Blob.
 */
export class ExportWriter {
  private readonly columns: string[] = [];
  private readonly columnIndex = new Map<string, number>();
  /** Per page: its rows (each ending in its line break), their byte lengths, and the column count then. */
  private readonly chunks: { blob: Blob; rowBytes: number[]; width: number }[] = [];
  private readonly encoder = new TextEncoder();
  count = 0;

  constructor(readonly format: FileFormat) {}

  add(entities: readonly Entity[]): void {
    this.count += entities.length;
    const rows =
      this.format === 'jsonl'
        ? entities.map((entity) => JSON.stringify(wireWithTimestamp(entity)) + '\n')
        : this.csvRows(entities);
    const encoded = rows.map((row) => this.encoder.encode(row));
    this.chunks.push({
      blob: new Blob(encoded),
      rowBytes: encoded.map((bytes) => bytes.length),
      width: this.columns.length,
    });
  }

  private csvRows(entities: readonly Entity[]): string[] {
    for (const entity of entities) {
      for (const name of entity.properties.keys()) {
        if (!this.columnIndex.has(name)) {
          this.columnIndex.set(name, this.columns.length);
          this.columns.push(name);
        }
      }
    }
    const width = this.columns.length;
    return entities.map((entity) => {
      const cells = [entity.partitionKey, entity.rowKey, entity.timestamp];
      const properties: string[] = new Array(width * 2).fill('');
      for (const [name, property] of entity.properties) {
        const at = this.columnIndex.get(name)! * 2;
        properties[at] = property.text;
        properties[at + 1] = property.type;
      }
      return [...cells, ...properties].map(csvField).join(',') + '\r\n';
    });
  }

  /** The whole file, ready for a download. */
  blob(type: string): Blob {
    if (this.format === 'jsonl')
      return new Blob(
        this.chunks.map((chunk) => chunk.blob),
        { type },
      );
    const width = this.columns.length;
    const header = [...keyNames, ...this.columns.flatMap((name) => [name, `${name}@type`])].map(csvField).join(',');
    const parts: BlobPart[] = [header + '\r\n'];
    for (const chunk of this.chunks) {
      if (chunk.width === width) {
        parts.push(chunk.blob);
        continue;
      }
      const padding = ','.repeat((width - chunk.width) * 2) + '\r\n';
      let offset = 0;
      for (const bytes of chunk.rowBytes) {
        parts.push(chunk.blob.slice(offset, offset + bytes - 2), padding); // less its own \r\n
        offset += bytes;
      }
    }
    return new Blob(parts, { type });
  }
}

function wireWithTimestamp(entity: Entity): Record<string, unknown> {
  const wire = entityToWire(entity.partitionKey, entity.rowKey, entity.properties);
  return entity.timestamp === ''
    ? wire
    : { PartitionKey: wire['PartitionKey'], RowKey: wire['RowKey'], Timestamp: entity.timestamp, ...wire };
}

function csvField(text: string): string {
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** An entity read from a file: keys and properties, validated per type. */
export interface ImportedEntity {
  readonly partitionKey: string;
  readonly rowKey: string;
  readonly properties: Map<string, Property>;
}

/** Reads a whole file; throws with the line number of the first bad record. */
export function parseImport(format: FileFormat, text: string): ImportedEntity[] {
  return format === 'jsonl' ? parseJsonLines(text) : parseTypedCsv(text);
}

function parseJsonLines(text: string): ImportedEntity[] {
  const entities: ImportedEntity[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      const entity = entityFromWire(parseWireJson(line) as Record<string, unknown>);
      entities.push(checked(entity.partitionKey, entity.rowKey, new Map(entity.properties)));
    } catch (error) {
      throw new Error(`line ${index + 1}: ${(error as Error).message}`);
    }
  });
  return entities;
}

function parseTypedCsv(text: string): ImportedEntity[] {
  const records = csvRecords(text.replace(/^\uFEFF/, ''));
  const header = records.shift();
  if (header === undefined) return [];
  const partitionAt = header.indexOf('PartitionKey');
  const rowAt = header.indexOf('RowKey');
  if (partitionAt < 0 || rowAt < 0) throw new Error('the header row needs PartitionKey and RowKey columns');
  const columns: { name: string; valueAt: number; typeAt: number; columnType: EdmType | undefined }[] = [];
  header.forEach((name, valueAt) => {
    if (name.endsWith('@type') || (keyNames as readonly string[]).includes(name)) return;
    const typeAt = header.indexOf(`${name}@type`);
    columns.push({ name, valueAt, typeAt, columnType: undefined });
  });
  return records.map((cells, index) => {
    const line = index + 2;
    try {
      const properties = new Map<string, Property>();
      for (const column of columns) {
        const value = cells[column.valueAt] ?? '';
        const typeText = column.typeAt < 0 ? '' : (cells[column.typeAt] ?? '');
        if (typeText === '' && value === '') continue;
        const type = typeText === '' ? (column.columnType ?? 'Edm.String') : edmTypeOf(typeText);
        column.columnType ??= typeText === '' ? undefined : type;
        properties.set(column.name, { type, text: value });
      }
      return checked(cells[partitionAt] ?? '', cells[rowAt] ?? '', properties);
    } catch (error) {
      throw new Error(`record ${line}: ${(error as Error).message}`);
    }
  });
}

function edmTypeOf(text: string): EdmType {
  const type = text.startsWith('Edm.') ? text : `Edm.${text}`;
  if (!isEdmType(type)) throw new Error(`unknown type '${text}'`);
  return type;
}

function checked(partitionKey: string, rowKey: string, properties: Map<string, Property>): ImportedEntity {
  for (const [name, property] of properties) {
    const reason = invalidReason(property.type, property.text);
    if (reason !== undefined) throw new Error(`${name}: '${property.text}' is not ${property.type} (${reason})`);
  }
  return { partitionKey, rowKey, properties };
}

/** RFC 4180 records; a final line break does not start an empty record. */
export function csvRecords(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let fieldText = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        fieldText += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else fieldText += c;
      i++;
      continue;
    }
    if (c === '"' && fieldText === '') quoted = true;
    else if (c === ',') {
      record.push(fieldText);
      fieldText = '';
    } else if (c === '\r' || c === '\n') {
      record.push(fieldText);
      records.push(record);
      record = [];
      fieldText = '';
      if (c === '\r' && text[i + 1] === '\n') i++;
    } else fieldText += c;
    i++;
  }
  if (quoted) throw new Error('a quoted field is not closed');
  if (fieldText !== '' || record.length > 0) {
    record.push(fieldText);
    records.push(record);
  }
  return records;
}
