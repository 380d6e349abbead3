// Everything an engine's blob test file calls: the conformance suite and its support.
export { runBlobConformance, type BlobConformanceOptions } from './suite.js';
export type { BlobStoreFactory, BlobStoreUnderTest } from './support.js';
