import { AgentError } from '../domain/errors.js';

export type OtelApi = typeof import('@opentelemetry/api');

const PEER = '@opentelemetry/api';
const INSTALL = `npm install ${PEER}`;

let loaded: OtelApi | null = null;

/**
 * Loads the optional peer `@opentelemetry/api` on first use: synchronously (so `otelObserver()`
 * fails where it is called, and the entry stays loadable with `require()`), without a static
 * `node:` import (the subpath stays bundleable). Its global registry is shared by every copy of
 * the API (ESM and CommonJS builds alike), so spans go to whatever provider the app registered.
 */
export function loadOtelApi(): OtelApi {
  if (loaded) return loaded;
  const nodeProcess = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const nodeModule = nodeProcess?.getBuiltinModule?.('node:module') as typeof import('node:module') | undefined;
  if (!nodeModule) {
    throw new AgentError('MissingDependency', `agentchart/otel loads ${PEER} with Node's module loader, which this runtime lacks.`);
  }
  try {
    loaded = nodeModule.createRequire(import.meta.url)(PEER) as OtelApi;
  } catch (error) {
    const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new AgentError('MissingDependency', `agentchart/otel needs the optional peer dependency ${PEER}: ${INSTALL} (${reason})`);
  }
  return loaded;
}
