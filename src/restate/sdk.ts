import type { AgentErrorCode } from '../domain/errors.js';
import { isModuleNotFound, missingDependency, type OptionalPackage } from '../peers/optional-sdk.js';

export type RestateSdk = typeof import('@restatedev/restate-sdk');

const RESTATE_SDK: OptionalPackage = {
  name: '@restatedev/restate-sdk',
  range: '^1.17',
  neededBy: 'agentchart/restate',
};

// Imported once, as the ES module the application imports: Restate's endpoint recognises handlers
// by a module-private symbol, so only definitions made by the app's own copy of the SDK are served
// (a synchronous require() would load a second copy under tsx, or the CommonJS build). The price
// is a top-level await: this entry point is imported, not required. A missing package becomes
// AgentError('MissingDependency') where agentObject is called.
let sdk: RestateSdk | null = null;
let failure: unknown = null;
try {
  sdk = await import('@restatedev/restate-sdk');
} catch (error) {
  failure = error;
}

export function restateSdk(): RestateSdk {
  if (sdk) return sdk;
  if (!isModuleNotFound(failure)) throw failure;
  throw missingDependency(RESTATE_SDK);
}

const STATUS: Partial<Record<AgentErrorCode, number>> = { InvalidInput: 400, UnknownToolCall: 404, StaleVersion: 409 };

/** A refusal: a terminal error (answered at once, never retried) whose message starts with the code. */
export function refusal(sdk: RestateSdk, code: AgentErrorCode, message: string): Error {
  return new sdk.TerminalError(`${code}: ${message}`, { errorCode: STATUS[code] ?? 500 });
}
