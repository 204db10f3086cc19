// Context guard: token estimate, tool-pair-safe compaction, the guard the runtime calls per request.
export * from './estimate.js';
export * from './parity.js';
export * from './compact.js';
export * from './guard.js';
