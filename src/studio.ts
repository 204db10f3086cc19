// agentchart/studio: watch, steer and rewind agents on a local page (Node only: it serves the page).
export { startStudio } from './studio/studio.js';
export type { Studio, StudioOptions } from './studio/studio.js';
export type { ClientStats } from './studio/stream-client.js';
