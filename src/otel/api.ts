import { AgentError } from '../domain/errors.js';
import { isModuleNotFound, missingDependency, type OptionalPackage } from '../peers/optional-sdk.js';

export type OtelApi = typeof import('@opentelemetry/api');

const OTEL_API: OptionalPackage = { name: '@opentelemetry/api', range: '^1.9.0', neededBy: 'agentchart/otel' };

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
    const missing = missingDependency(OTEL_API);
    const why = "agentchart/otel loads it with Node's module loader, which this runtime lacks";
    throw new AgentError('MissingDependency', `${missing.message} (${why})`);
  }
  try {
    loaded = nodeModule.createRequire(import.meta.url)(OTEL_API.name) as OtelApi;
  } catch (error) {
    if (!isModuleNotFound(error)) throw error;
    throw missingDependency(OTEL_API);
  }
  return loaded;
}
