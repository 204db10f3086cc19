// agentchart/restate: sessions as Restate virtual objects, one per session key. Needs the optional peer
// @restatedev/restate-sdk; the Restate server (BSL 1.1) runs separately.
export { agentObject } from './restate/object.js';
export type { AgentObjectOptions } from './restate/object.js';
export { INTERRUPTED_BY_RESTART } from './runtime/resume.js';
