// `cerulean insights [--json] [--endpoint URL] [--account NAME --key KEY]`: prints the design
// insights of a running server (GET /_insights) as text, or as the server's JSON with --json.
// From loopback no credentials are needed; elsewhere give an account and its key (Shared Key Lite).
// Runs standalone too: `node dist/src/cli/commands/insights.js …`.
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sign } from '../../http/auth.js';
import type { Finding, InsightsReport } from '../../observe/insights.js';

export const insightsUsage = `Usage: cerulean insights [--json] [--endpoint URL] [--account NAME --key KEY]

  --endpoint URL   the server (default http://127.0.0.1:10002; an account path is ignored)
  --json           print the findings as JSON
  --account NAME   with --key: sign the request (needed from other than loopback)
  --key KEY        the account key (base64)`;

/** Exit code: 0 with the report printed, 1 when the server cannot be asked, 2 for bad arguments. */
export async function runInsights(argv: readonly string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        endpoint: { type: 'string', default: 'http://127.0.0.1:10002' },
        json: { type: 'boolean', default: false },
        account: { type: 'string' },
        key: { type: 'string' },
        help: { type: 'boolean', default: false },
      },
      strict: true,
    }));
    if ((values.account === undefined) !== (values.key === undefined)) throw new Error('--account and --key go together');
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${insightsUsage}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${insightsUsage}\n`);
    return 0;
  }
  let report: InsightsReport;
  try {
    report = await fetchInsights(values.endpoint, values.account, values.key);
  } catch (error) {
    process.stderr.write(`cerulean insights: ${(error as Error).message}\n`);
    return 1;
  }
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : formatInsights(report));
  return 0;
}

async function fetchInsights(endpoint: string, account: string | undefined, key: string | undefined): Promise<InsightsReport> {
  const url = new URL('/_insights', endpoint);
  const headers: Record<string, string> = { 'x-ms-date': new Date().toUTCString(), 'x-ms-version': '2019-02-02' };
  if (account !== undefined && key !== undefined) {
    const stringToSign = `${headers['x-ms-date']}\n/${account}/_insights`;
    headers['Authorization'] = `SharedKeyLite ${account}:${sign(stringToSign, Buffer.from(key, 'base64'))}`;
  }
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as InsightsReport;
}

/** The report as text: one block per finding, grouped by table. */
export function formatInsights(report: InsightsReport): string {
  const lines = [`Design insights (observed since ${report.observedSince})`, ''];
  if (report.findings.length === 0) lines.push('No findings: nothing in the workload so far goes against the design guides.', '');
  const byTable = new Map<string, Finding[]>();
  for (const finding of report.findings) {
    const table = `${finding.account}/${finding.table}`;
    byTable.set(table, [...(byTable.get(table) ?? []), finding]);
  }
  for (const [table, findings] of byTable) {
    lines.push(`Table ${table}`);
    for (const finding of findings) {
      lines.push(`  [${finding.kind}] ${finding.summary}`);
      const evidence = Object.entries(finding.evidence).map(([name, value]) => `${name}=${typeof value === 'string' ? JSON.stringify(value) : value}`);
      lines.push(`    evidence: ${evidence.join(', ')}`);
      lines.push(`    fix: ${finding.pattern}`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

// Standalone: `node dist/src/cli/commands/insights.js …`.
if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = await runInsights(process.argv.slice(2));
}
