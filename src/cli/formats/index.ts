// The file formats by name, and the one a file name implies. Pure.
export const formatNames = ['jsonl', 'typed-csv', 'csv'] as const;
export type FormatName = (typeof formatNames)[number];

/** `--format` if given, else by extension (`.typed.csv`, `.csv`, `.jsonl`/`.json`), else jsonl. */
export function chooseFormat(explicit: string | undefined, file: string | undefined): FormatName {
  if (explicit !== undefined) {
    if (!(formatNames as readonly string[]).includes(explicit)) {
      throw new Error(`--format must be one of ${formatNames.join(', ')}, not '${explicit}'`);
    }
    return explicit as FormatName;
  }
  const lower = (file ?? '').toLowerCase();
  if (lower.endsWith('.typed.csv')) return 'typed-csv';
  if (lower.endsWith('.csv')) return 'csv';
  return 'jsonl';
}
