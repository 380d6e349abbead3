// Everything an engine's queue test file calls: the conformance suite and the model test.
import { runQueueModelCheck, type QueueModelCheckOptions } from './model-check.js';
import { runQueueConformance, type QueueConformanceOptions } from './suite.js';
import type { QueueStoreFactory } from './support.js';

export type { QueueStoreFactory, QueueStoreUnderTest } from './support.js';

export interface QueueEngineOptions extends QueueConformanceOptions {
  readonly model?: QueueModelCheckOptions;
}

/** The suite and the model test for one engine. */
export function runQueueEngineConformance(
  engine: string,
  factory: QueueStoreFactory,
  options: QueueEngineOptions = {},
): void {
  runQueueConformance(engine, factory, options);
  runQueueModelCheck(engine, factory, options.model);
}
