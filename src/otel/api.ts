import { AgentError } from '../domain/errors.js';

export type OtelApi = typeof import('@opentelemetry/api');

const PEER = '@opentelemetry/api';
/** Worded like the provider adapters' MissingDependency errors. */
const MISSING =
  `agentchart/otel needs the optional peer dependency "${PEER}" (^1.9.0), which is not installed. ` +
  `Install it with: npm install ${PEER}`;

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
    const why = "agentchart/otel loads it with Node's module loader, which this runtime lacks";
    throw new AgentError('MissingDependency', `${MISSING} (${why})`);
  }
  try {
    loaded = nodeModule.createRequire(import.meta.url)(PEER) as OtelApi;
  } catch (error) {
    if (!isModuleNotFound(error)) throw error;
    throw new AgentError('MissingDependency', MISSING);
  }
  return loaded;
}

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}
