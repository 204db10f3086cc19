export * from './messages.js';
export * from './errors.js';
export * from './counters.js';
export * from './events.js';
export * from './outcomes.js';
