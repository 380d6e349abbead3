// The Blob sections of the benchmark report: transfer rates beside Azurite and the bare node:http
// servers, and the resident memory during a 1 GiB upload.
import type { UploadMemoryRecord } from './blob-memory.js';
import { milliseconds, opsPerSec, ratio } from './format.js';
import type { LoadResult } from './load.js';
import type { SummaryRow } from './report.js';
import { serverLabels, type ServerKind } from './servers.js';

const mib = 1024 * 1024;

/** One row per transfer scenario and concurrency: MiB/s of each server, and Cerulean's ratios. */
export function blobTransferSection(rows: readonly SummaryRow[], bytesPerOperation: Record<string, number>): string[] {
  if (rows.length === 0) return [];
  const lines = [
    'Blob transfers (MiB/s = ops/s × blob size; "÷ bare" = Cerulean ÷ the bare node:http server, which drops ' +
      'uploads and streams downloads from memory; "÷ bare-disk" = Cerulean ÷ the bare server that writes each ' +
      'upload to a file with fsync and streams downloads from it):',
    '',
    '| scenario | C | Cerulean MiB/s | ops/s | p99 ms | Azurite disk MiB/s | p99 ms | ÷ disk | Azurite mem MiB/s ' +
      '| ÷ mem | PG MiB/s | bare MiB/s | bare-disk MiB/s | ÷ bare | ÷ bare-disk |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const row of rows) {
    const bytes = bytesPerOperation[row.scenario]!;
    const best = (kind: ServerKind) => row.cells[kind]?.best;
    const rate = (kind: ServerKind) => mibPerSec(best(kind), bytes);
    const share = (kind: ServerKind) => quotient(best('cerulean'), best(kind));
    lines.push(
      `| ${row.scenario} | ${row.concurrency} | ${rate('cerulean')} | ${ops(best('cerulean'))} | ` +
        `${p99(best('cerulean'))} | ${rate('azurite-disk')} | ${p99(best('azurite-disk'))} | ` +
        `${ratio(share('azurite-disk'))} | ${rate('azurite-memory')} | ${ratio(share('azurite-memory'))} | ` +
        `${rate('cerulean-pg')} | ${rate('bare')} | ${rate('bare-disk')} | ${ratio(share('bare'))} | ` +
        `${ratio(share('bare-disk'))} |`,
    );
  }
  lines.push('');
  return lines;
}

/** Peak resident memory of the process serving blobs while 1 GiB went up. */
export function uploadMemorySection(records: readonly UploadMemoryRecord[]): string[] {
  if (records.length === 0) return [];
  const lines = [
    'Resident memory (VmRSS of the process serving blobs, sampled every 50 ms) during a 1 GiB upload:',
    '',
    '| server | upload | RSS before MiB | peak RSS MiB | MiB/s |',
    '| --- | --- | ---: | ---: | ---: |',
  ];
  for (const record of records) {
    const label = serverLabels[record.server];
    if (record.error !== undefined) {
      lines.push(`| ${label} | ${record.upload} | n/a (${record.error.slice(0, 80)}) | – | – |`);
      continue;
    }
    lines.push(
      `| ${label} | ${record.upload} | ${record.rssBeforeMiB ?? '–'} | ${record.rssPeakMiB ?? '–'} | ` +
        `${record.mibPerSec === undefined ? '–' : record.mibPerSec.toFixed(0)} |`,
    );
  }
  lines.push('');
  return lines;
}

function mibPerSec(result: LoadResult | undefined, bytes: number): string {
  if (result === undefined) return '–';
  const rate = (result.opsPerSec * bytes) / mib;
  return rate >= 100 ? Math.round(rate).toString() : rate.toPrecision(3);
}

function quotient(top: LoadResult | undefined, bottom: LoadResult | undefined): number | undefined {
  return top === undefined || bottom === undefined ? undefined : top.opsPerSec / bottom.opsPerSec;
}

function ops(result: LoadResult | undefined): string {
  return result === undefined ? '–' : opsPerSec(result.opsPerSec);
}

function p99(result: LoadResult | undefined): string {
  return result === undefined ? '–' : milliseconds(result.p99Ms);
}
