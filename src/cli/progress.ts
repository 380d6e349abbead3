// Progress of long work: a live bar on a terminal (entities or files and bytes, rate, time left),
// a plain line every few seconds otherwise (logs, pipes, CI). Always on stderr: stdout may be data.
import cliProgress from 'cli-progress';
import { formatCount } from './command.js';

const plainLineIntervalMs = 5_000;

export interface Progress {
  /** `entities` more done; `position` of `total` if the total is known (e.g. bytes read). */
  update(entities: number, position?: number): void;
  /** Stops the bar and returns "N entities in S s (R/s)". */
  finish(): string;
}

export function startProgress(label: string, total?: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  const startedMs = Date.now();
  let entities = 0;
  const rate = () => Math.round(entities / Math.max((Date.now() - startedMs) / 1000, 0.001));
  const summary = () => {
    const seconds = ((Date.now() - startedMs) / 1000).toFixed(1);
    return `${formatCount(entities)} entities in ${seconds} s (${formatCount(rate())}/s)`;
  };

  if (stream.isTTY) {
    const format =
      total !== undefined && total > 0
        ? `${label} [{bar}] {percentage}% | {entities} entities | {rate}/s | ETA {eta_formatted}`
        : `${label} {entities} entities | {rate}/s | {duration_formatted}`;
    const bar = new cliProgress.SingleBar(
      { format, stream, hideCursor: true, etaBuffer: 50 },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total ?? 0, 0, { entities: '0', rate: '0' });
    return {
      update(more, position) {
        entities += more;
        bar.update(position ?? 0, { entities: formatCount(entities), rate: formatCount(rate()) });
      },
      finish() {
        bar.stop();
        return summary();
      },
    };
  }

  let lastLineMs = startedMs;
  return {
    update(more) {
      entities += more;
      if (Date.now() - lastLineMs >= plainLineIntervalMs) {
        lastLineMs = Date.now();
        stream.write(`${label}: ${formatCount(entities)} entities, ${formatCount(rate())}/s\n`);
      }
    },
    finish: summary,
  };
}

/** Work counted in items (files, blobs, messages) and bytes; the totals when known up front. */
export interface TransferTotals {
  readonly items?: number;
  readonly bytes?: number;
}

export interface TransferProgress {
  /** `items` more done, carrying `bytes`. */
  add(items: number, bytes: number): void;
  /** Stops the bar and returns "N files, B bytes in S s (R/s)". */
  finish(): string;
}

/** "1.5 MiB", "12 B": binary units, one decimal. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** One line of a transfer under way: "412/1,000 files, 25.8 MiB, 3.1 MiB/s, 8 s left". */
export function describeTransfer(
  done: { items: number; bytes: number },
  totals: TransferTotals,
  elapsedMs: number,
  noun: string,
): string {
  const seconds = Math.max(elapsedMs / 1000, 0.001);
  const items =
    totals.items === undefined ? formatCount(done.items) : `${formatCount(done.items)}/${formatCount(totals.items)}`;
  const parts = [`${items} ${noun}`, formatBytes(done.bytes), `${formatBytes(Math.round(done.bytes / seconds))}/s`];
  const left = secondsLeft(done, totals, seconds);
  if (left !== undefined) parts.push(`${left} s left`);
  return parts.join(', ');
}

/** By bytes when their total is known, else by items; undefined before there is a rate. */
function secondsLeft(done: { items: number; bytes: number }, totals: TransferTotals, seconds: number) {
  const [now, total] =
    totals.bytes !== undefined && totals.bytes > 0 ? [done.bytes, totals.bytes] : [done.items, totals.items];
  if (total === undefined || now <= 0) return undefined;
  return Math.max(0, Math.round(((total - now) * seconds) / now));
}

/**
 * A live line on a terminal (count, bytes, rate, time left), redrawn at most every 100 ms; otherwise
 * a plain line every 5 s (logs, pipes, CI). `noun` names the items ("files", "blobs").
 */
export function startTransferProgress(
  label: string,
  noun: string,
  totals: TransferTotals = {},
  stream: NodeJS.WriteStream = process.stderr,
): TransferProgress {
  const startedMs = Date.now();
  const done = { items: 0, bytes: 0 };
  const line = () => `${label}: ${describeTransfer(done, totals, Date.now() - startedMs, noun)}`;
  const interval = stream.isTTY ? 100 : plainLineIntervalMs;
  let lastMs = startedMs;
  const draw = () => {
    if (stream.isTTY) stream.write(`\r${line()}\x1b[K`);
    else stream.write(`${line()}\n`);
  };
  if (stream.isTTY) draw();
  return {
    add(items, bytes) {
      done.items += items;
      done.bytes += bytes;
      if (Date.now() - lastMs < interval) return;
      lastMs = Date.now();
      draw();
    },
    finish() {
      if (stream.isTTY) stream.write('\r\x1b[K');
      const seconds = (Date.now() - startedMs) / 1000;
      const rate = formatBytes(Math.round(done.bytes / Math.max(seconds, 0.001)));
      return `${formatCount(done.items)} ${noun}, ${formatCount(done.bytes)} bytes in ${seconds.toFixed(1)} s (${rate}/s)`;
    },
  };
}
