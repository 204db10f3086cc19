// agentchart/inspect: Node-only inspection tools (a trace file writer, the loopback XState inspector relay).
// Kept out of the core entry, which stays browser-safe.
export { recordTrace } from './trace/file.js';
export type { FileTraceRecorder } from './trace/file.js';
export { startInspector, InspectorError, STATELY_INSPECTOR_URL } from './trace/inspector-relay.js';
export type { Inspector, InspectorOptions } from './trace/inspector-relay.js';
