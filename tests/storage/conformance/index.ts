// Everything an engine's test file calls: the conformance suite, the model test and the fault
// test, one call for all three (tests/storage/sqlite.test.ts; a PostgreSQL engine's the same way).
import { runFaultCheck, type FaultCheckOptions } from './fault-check.js';
import { runModelCheck, type ModelCheckOptions } from './model-check.js';
import { runStoreConformance, type ConformanceOptions } from './suite.js';
import type { StoreFactory } from './support.js';

export { runFaultCheck, type FaultCheckOptions } from './fault-check.js';
export { FaultyStore, type FaultKind } from './faulty-store.js';
export { ModelStore } from './model.js';
export { runModelCheck, type ModelCheckOptions } from './model-check.js';
export { runStoreConformance, type ConformanceOptions } from './suite.js';
export type { StoreFactory, StoreUnderTest } from './support.js';

export interface EngineOptions extends ConformanceOptions {
  readonly model?: ModelCheckOptions;
  readonly faults?: FaultCheckOptions;
}

/** The suite, the model test and the fault test for one engine. */
export function runEngineConformance(engine: string, factory: StoreFactory, options: EngineOptions = {}): void {
  runStoreConformance(engine, factory, options);
  runModelCheck(engine, factory, options.model);
  runFaultCheck(engine, factory, options.faults);
}
