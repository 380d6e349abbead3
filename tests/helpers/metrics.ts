// Reading Cerulean's own endpoints in tests: /_metrics in Prometheus text, /_insights as JSON.
import assert from 'node:assert/strict';
import { describeResponse, send } from './http.js';

/** The /_metrics text, fetched without credentials (tests run on loopback). */
export async function scrape(port: number): Promise<string> {
  const res = await send(port, { method: 'GET', path: '/_metrics', auth: 'none' });
  assert.equal(res.status, 200, describeResponse(res));
  return res.text;
}

/**
 * The sum of the samples of `name` whose labels include `labels` (undefined when there is none).
 * Written independently of prom-client: one line per sample, `name{a="x",b="y"} value`.
 */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let sum: number | undefined;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) sum = (sum ?? 0) + Number(match[3]);
  }
  return sum;
}

/** Every sample line of a metric, for failure messages and label checks. */
export function samples(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
}

export interface Finding {
  kind: string;
  account: string;
  table: string;
  /** A blob finding's container, and the blob of a repeated read. */
  container?: string;
  blob?: string;
  summary: string;
  evidence: Record<string, string | number>;
  pattern: string;
}

export async function insights(port: number): Promise<{ findings: Finding[]; counts: Record<string, number> }> {
  const res = await send(port, { method: 'GET', path: '/_insights', auth: 'none' });
  assert.equal(res.status, 200, describeResponse(res));
  return res.json();
}
