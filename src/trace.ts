// agentchart/trace: recording an agent's charts as a trace, reading a trace back, and the trace
// viewer page. Browser-safe; writing a trace to a file is `recordTrace` in agentchart/inspect (Node).
export { createTraceRecorder, defaultActorLabel } from './trace/recorder.js';
export type { TraceRecorder, TraceRecorderOptions } from './trace/recorder.js';
export {
  parseTrace,
  TraceFormatError,
  TraceEntrySchema,
  TraceHeaderSchema,
  TRACE_FORMAT,
  TRACE_VERSION,
} from './trace/format.js';
export type { Trace, TraceEntry, TraceEntryOf, TraceHeader, MachineOutlineNode, StateValue } from './trace/format.js';
export { machineOutline } from './trace/outline.js';
export { viewerHtml, machineIdOfSvg } from './trace/viewer-html.js';
export type { ViewerHtmlOptions } from './trace/viewer-html.js';
