import { AgentError, type AgentErrorCode } from '../domain/errors.js';

export type RestateSdk = typeof import('@restatedev/restate-sdk');

const PEER = '@restatedev/restate-sdk';

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
  throw new AgentError(
    'MissingDependency',
    `agentchart/restate needs the optional peer dependency ${PEER} (^1.17), which is not installed. ` +
      `Install it with: npm install ${PEER}`,
  );
}

function isModuleNotFound(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 3) return false;
  const { code, cause } = error as { code?: unknown; cause?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || isModuleNotFound(cause, depth + 1);
}

const STATUS: Partial<Record<AgentErrorCode, number>> = { InvalidInput: 400, UnknownToolCall: 404, StaleVersion: 409 };

/** A refusal: a terminal error (answered at once, never retried) whose message starts with the code. */
export function refusal(sdk: RestateSdk, code: AgentErrorCode, message: string): Error {
  return new sdk.TerminalError(`${code}: ${message}`, { errorCode: STATUS[code] ?? 500 });
}
