export * from './keys.js';
export * from './schema.js';
export * from './limits.js';
export * from './model.js';
export * from './filter.js';
export * from './retry.js';
export * from './table.js';
