// Fault injection (`--faults FILE`, `/_faults`): rules matched by operation and table that fire
// with a probability (a seeded PRNG, so a run with the same requests in the same order fails the
// same way) or on every Nth matching request. What a fault does to a request is decided here;
// doing it is Observation's part (observation.ts).
import { StorageError } from '../errors.js';
import { faultLatencyMsMax, faultRulesMax } from '../limits.js';
import type { OperationName } from '../http/service-definition.js';
import { seededRandom } from '../domain/random.js';

export const faultKinds = [
  /** 503 ServerBusy, not executed. */
  'serverBusy',
  /** 500 OperationTimedOut, not executed. */
  'operationTimedOut',
  /** 500 InternalError, not executed. */
  'internalError',
  /** Executed after `latencyMs`. */
  'latency',
  /** The connection is reset before anything is executed or answered. */
  'connectionReset',
  /** Executed (a write commits), then the connection is reset instead of answered. */
  'answerLost',
] as const;

export type FaultKind = (typeof faultKinds)[number];

export interface FaultRule {
  readonly kind: FaultKind;
  /** Operation names (Analytics terms, e.g. InsertEntity); absent = every operation. */
  readonly operations?: readonly OperationName[];
  /** Table name, case-insensitive; absent = every table (and requests that name none). */
  readonly table?: string;
  /** Fires with this probability, 0 < p ≤ 1 … */
  readonly probability?: number;
  /** … or on every Nth matching request (the Nth, 2Nth, …). One of the two is required. */
  readonly every?: number;
  /** For `latency`: the delay, in ms. */
  readonly latencyMs?: number;
  /** Stops firing after this many faults (absent = never stops). */
  readonly limit?: number;
}

export interface FaultDocument {
  /** Seed of the PRNG behind `probability` (default 1). */
  readonly seed: number;
  readonly rules: readonly FaultRule[];
}

/** A fault picked for one request. */
export interface Fault {
  readonly kind: FaultKind;
  readonly latencyMs: number;
  /** Index of the rule in the document. */
  readonly rule: number;
}

/**
 * Validates a fault document (from a file or a PUT) against the operations the server's route
 * tables name; throws StorageError InvalidInput with the reason.
 */
export function parseFaultDocument(text: string, operationNames: readonly OperationName[]): FaultDocument {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('the fault document is not valid JSON');
  }
  if (!isRecord(parsed)) throw invalid('the fault document must be a JSON object');
  const { seed = 1, rules } = parsed;
  if (typeof seed !== 'number' || !Number.isSafeInteger(seed)) throw invalid('seed must be an integer');
  if (!Array.isArray(rules) || rules.length > faultRulesMax)
    throw invalid(`rules must be an array of at most ${faultRulesMax} rules`);
  return { seed, rules: rules.map((rule, index) => parseRule(rule, index, operationNames)) };
}

function parseRule(rule: unknown, index: number, operationNames: readonly OperationName[]): FaultRule {
  const at = `rules[${index}]`;
  if (!isRecord(rule)) throw invalid(`${at} must be an object`);
  const known = new Set(['kind', 'operation', 'operations', 'table', 'probability', 'every', 'latencyMs', 'limit']);
  for (const name of Object.keys(rule)) if (!known.has(name)) throw invalid(`${at}: unknown field '${name}'`);
  const { kind, table, probability, every, latencyMs, limit } = rule;
  if (!faultKinds.includes(kind as FaultKind)) throw invalid(`${at}.kind must be one of ${faultKinds.join(', ')}`);
  const operationList = rule['operations'] ?? (rule['operation'] === undefined ? undefined : [rule['operation']]);
  if (operationList !== undefined) {
    if (!Array.isArray(operationList) || !operationList.every((name) => operationNames.includes(name as string))) {
      throw invalid(`${at}.operation must name operations among ${operationNames.join(', ')}`);
    }
  }
  if (table !== undefined && (typeof table !== 'string' || table === ''))
    throw invalid(`${at}.table must be a table name`);
  if ((probability === undefined) === (every === undefined)) throw invalid(`${at} needs either probability or every`);
  if (probability !== undefined && !(typeof probability === 'number' && probability > 0 && probability <= 1)) {
    throw invalid(`${at}.probability must be a number in (0, 1]`);
  }
  if (every !== undefined && !isCount(every)) throw invalid(`${at}.every must be a whole number from 1`);
  if (limit !== undefined && !isCount(limit)) throw invalid(`${at}.limit must be a whole number from 1`);
  if ((kind === 'latency') !== (latencyMs !== undefined))
    throw invalid(`${at}: latencyMs goes with kind latency, and only with it`);
  if (
    latencyMs !== undefined &&
    !(Number.isInteger(latencyMs) && (latencyMs as number) >= 0 && (latencyMs as number) <= faultLatencyMsMax)
  ) {
    throw invalid(`${at}.latencyMs must be a whole number of ms from 0 to ${faultLatencyMsMax}`);
  }
  return {
    kind: kind as FaultKind,
    ...(operationList === undefined ? {} : { operations: operationList as OperationName[] }),
    ...(table === undefined ? {} : { table: table as string }),
    ...(probability === undefined ? {} : { probability: probability as number }),
    ...(every === undefined ? {} : { every: every as number }),
    ...(latencyMs === undefined ? {} : { latencyMs: latencyMs as number }),
    ...(limit === undefined ? {} : { limit: limit as number }),
  };
}

/** The rules in force and their state (match counters, PRNG); replaced as a whole by a PUT. */
export class FaultPlan {
  private document: FaultDocument = { seed: 1, rules: [] };
  private random = seededRandom(1);
  private matched: number[] = [];
  private fired: number[] = [];

  constructor(document?: FaultDocument) {
    if (document !== undefined) this.replace(document);
  }

  /** Puts a new document in force; counters and the PRNG start again from its seed. */
  replace(document: FaultDocument): void {
    this.document = document;
    this.random = seededRandom(document.seed);
    this.matched = document.rules.map(() => 0);
    this.fired = document.rules.map(() => 0);
  }

  get empty(): boolean {
    return this.document.rules.length === 0;
  }

  /** The document and how often each rule matched and fired, for GET /_faults. */
  describe(): object {
    return {
      seed: this.document.seed,
      rules: this.document.rules.map((rule, i) => ({ ...rule, matched: this.matched[i], fired: this.fired[i] })),
    };
  }

  /** The first rule that matches and fires for this request, if any. `table` is asked only when a rule names one. */
  pick(operation: OperationName, table: () => string | undefined): Fault | undefined {
    const { rules } = this.document;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      if (rule.operations !== undefined && !rule.operations.includes(operation)) continue;
      if (rule.table !== undefined && rule.table.toLowerCase() !== table()?.toLowerCase()) continue;
      if (rule.limit !== undefined && this.fired[i]! >= rule.limit) continue;
      const count = ++this.matched[i]!;
      const fires = rule.every !== undefined ? count % rule.every === 0 : this.random() < rule.probability!;
      if (!fires) continue;
      this.fired[i]!++;
      return { kind: rule.kind, latencyMs: rule.latencyMs ?? 0, rule: i };
    }
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}

function invalid(reason: string): StorageError {
  return new StorageError('InvalidInput', `Invalid fault rules: ${reason}.`);
}
