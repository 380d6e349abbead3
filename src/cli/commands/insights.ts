// `cerulean insights [--json] [-c CONNECTION]`: prints the design insights of a running server
// (GET /_insights) as text, or as the server's JSON with --json. The server is the one -c names, as
// for every command; from loopback no credentials are needed, elsewhere the account key signs.
import type { Command } from 'commander';
import type { Finding, InsightsReport } from '../../observe/insights.js';
import { adminRequest } from '../admin.js';
import { type CliCommand, connectionOption } from '../command.js';
import { resolveEndpoint } from '../endpoint.js';

interface InsightsOptions {
  json?: boolean;
  connectionString?: string;
}

export const insightsCommand: CliCommand = {
  name: 'insights',
  register(program: Command) {
    program
      .command('insights')
      .description("print the server's design insights: hot partitions, scans, key patterns, large entities")
      .option('--json', 'the findings as JSON')
      .addOption(connectionOption())
      .addHelpText('after', '\nExample:\n  cerulean insights -c UseDevelopmentStorage=true\n')
      .action((options: InsightsOptions) => insights(options));
  },
};

async function insights(options: InsightsOptions): Promise<void> {
  const endpoint = resolveEndpoint(options.connectionString);
  const text = await adminRequest(endpoint.admin, { method: 'GET', path: '/_insights' });
  const report = JSON.parse(text) as InsightsReport;
  process.stdout.write(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatInsights(report));
}

/** The report as text: one block per finding, grouped by table, tables in the order of their first (worst) finding. */
function formatInsights(report: InsightsReport): string {
  const lines = [`Design insights (observed since ${report.observedSince})`, ''];
  if (report.findings.length === 0)
    lines.push('No findings: nothing in the workload so far goes against the design guides.', '');
  const byTable = new Map<string, Finding[]>();
  for (const finding of report.findings) {
    const table = headingOf(finding);
    byTable.set(table, [...(byTable.get(table) ?? []), finding]);
  }
  for (const [table, findings] of byTable) {
    lines.push(table);
    for (const finding of findings) {
      lines.push(`  [${finding.kind}] ${finding.summary}`);
      const evidence = Object.entries(finding.evidence).map(
        ([name, value]) => `${name}=${typeof value === 'string' ? JSON.stringify(value) : value}`,
      );
      lines.push(`    evidence: ${evidence.join(', ')}`);
      lines.push(`    fix: ${finding.pattern}`);
      if (finding.wastedEntities > 0)
        lines.push(`    wasted: ${finding.wastedEntities} entities read and not returned`);
    }
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

/** "Table account/name" or, for queue findings, "Queue account/name", for blob findings "Container account/name". */
function headingOf(finding: Finding): string {
  if (finding.queue !== undefined) return `Queue ${finding.account}/${finding.queue}`;
  if (finding.container !== undefined) return `Container ${finding.account}/${finding.container}`;
  return `Table ${finding.account}/${finding.table}`;
}
