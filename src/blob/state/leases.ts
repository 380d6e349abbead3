// Leases are shared by the Blob service and the Data Lake API (one blob, one lease): domain/lease.ts.
export * from '../../domain/lease.js';
