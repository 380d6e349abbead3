// `cerulean insights [--json] [--endpoint URL] [--account NAME --key KEY]`: prints the design
// insights of a running server (GET /_insights) as text, or as the server's JSON with --json.
// From loopback no credentials are needed; elsewhere give an account and its key (Shared Key Lite).
import type { Command } from 'commander';
import { sign } from '../../http/auth.js';
import type { Finding, InsightsReport } from '../../observe/insights.js';
import { type CliCommand, CliError } from '../command.js';

interface InsightsOptions {
  endpoint: string;
  json?: boolean;
  account?: string;
  key?: string;
}

export const insightsCommand: CliCommand = {
  name: 'insights',
  register(program: Command) {
    program
      .command('insights')
      .description("print the server's design insights: hot partitions, scans, key patterns, large entities")
      .option('--endpoint <url>', 'the server (an account path is ignored)', 'http://127.0.0.1:10002')
      .option('--json', 'the findings as JSON')
      .option('--account <name>', 'with --key: sign the request (needed from other than loopback)')
      .option('--key <key>', 'the account key (base64)')
      .addHelpText('after', '\nExample:\n  cerulean insights --endpoint http://127.0.0.1:10002\n')
      .action((options: InsightsOptions) => insights(options));
  },
};

async function insights(options: InsightsOptions): Promise<void> {
  if ((options.account === undefined) !== (options.key === undefined))
    throw new CliError('--account and --key go together', 2);
  let report: InsightsReport;
  try {
    report = await fetchInsights(options.endpoint, options.account, options.key);
  } catch (error) {
    // fetch says only "fetch failed"; the cause says why (e.g. ECONNREFUSED).
    const { message, cause } = error as Error & { cause?: Error };
    throw new CliError(cause?.message === undefined ? message : `${message}: ${cause.message}`);
  }
  process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatInsights(report));
}

async function fetchInsights(
  endpoint: string,
  account: string | undefined,
  key: string | undefined,
): Promise<InsightsReport> {
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
function formatInsights(report: InsightsReport): string {
  const lines = [`Design insights (observed since ${report.observedSince})`, ''];
  if (report.findings.length === 0)
    lines.push('No findings: nothing in the workload so far goes against the design guides.', '');
  const byTable = new Map<string, Finding[]>();
  for (const finding of report.findings) {
    const table = `${finding.account}/${finding.table}`;
    byTable.set(table, [...(byTable.get(table) ?? []), finding]);
  }
  for (const [table, findings] of byTable) {
    lines.push(`Table ${table}`);
    for (const finding of findings) {
      lines.push(`  [${finding.kind}] ${finding.summary}`);
      const evidence = Object.entries(finding.evidence).map(
        ([name, value]) => `${name}=${typeof value === 'string' ? JSON.stringify(value) : value}`,
      );
      lines.push(`    evidence: ${evidence.join(', ')}`);
      lines.push(`    fix: ${finding.pattern}`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}
