// What the server's query plan means for the user, in the design guides' terms.
import type { QueryPlan } from './api.js';

const explanations: Record<string, string> = {
  point: 'Point query: one PartitionKey and one RowKey, the cheapest read there is.',
  range: 'Range query: one partition, a RowKey range: reads only the keys in that range.',
  'multi-range': 'Several key ranges: each is read in key order; cost grows with the number of ranges and their sizes.',
  'partition-scan':
    'Partition scan: reads every entity of the partition to test the other conditions. Fine for small partitions; ' +
    'for large ones add a RowKey range, or keep the property you filter on in the RowKey (or in an index entity in the same partition).',
  'table-scan':
    'Table scan: reads every partition, so its cost grows with the whole table. Add a PartitionKey condition, or ' +
    "keep a secondary index: index entities whose PartitionKey/RowKey hold the value you search by (the design guides' index-entity pattern).",
};

export function planSummary(plan: QueryPlan | undefined, elapsedMs: number): string {
  const time = `${elapsedMs.toFixed(0)} ms`;
  if (plan === undefined) return `time ${time}`;
  const counts = [
    plan.scanned === undefined ? '' : `read ${plan.scanned}`,
    plan.returned === undefined ? '' : `returned ${plan.returned}`,
  ];
  return [`plan: ${plan.kind}`, ...counts.filter((part) => part !== ''), `time ${time}`].join(' · ');
}

export function planExplanation(plan: QueryPlan | undefined): string {
  if (plan === undefined) return '';
  if (!isScan(plan) && (plan.kind === 'table-scan' || plan.kind === 'partition-scan')) {
    return 'Reads in key order and returns every entity it reads: a page costs only its own size.';
  }
  return explanations[plan.kind] ?? '';
}

/** A scan that read entities it did not return: its cost grows with the data, not the result. */
export function isScan(plan: QueryPlan | undefined): boolean {
  const scanning = plan?.kind === 'table-scan' || plan?.kind === 'partition-scan';
  return scanning && (plan.scanned === undefined || plan.returned === undefined || plan.scanned > plan.returned);
}
