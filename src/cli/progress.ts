// Progress of long work: a live bar on a terminal (entities, rate, ETA when the total is known),
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
