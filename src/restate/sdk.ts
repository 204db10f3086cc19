import { AgentError, type AgentErrorCode } from '../domain/errors.js';

export type RestateSdk = typeof import('@restatedev/restate-sdk');

// Loaded once, as the same ES module the application imports (one copy of the SDK's classes, which
// its endpoint checks with instanceof); a missing package becomes a typed error when it is used.
let sdk: RestateSdk | null = null;
let failure: unknown = null;
try {
  sdk = await import('@restatedev/restate-sdk');
} catch (error) {
  failure = error;
}

export function restateSdk(): RestateSdk {
  if (sdk) return sdk;
  const detail = failure instanceof Error ? failure.message : String(failure);
  throw new AgentError(
    'MissingDependency',
    `agentchart/restate needs the package @restatedev/restate-sdk (an optional peer dependency): npm install @restatedev/restate-sdk (${detail})`,
  );
}

const STATUS: Partial<Record<AgentErrorCode, number>> = { InvalidInput: 400, UnknownToolCall: 404, StaleVersion: 409 };

/** A refusal: a terminal error (answered at once, never retried) whose message starts with the code. */
export function refusal(sdk: RestateSdk, code: AgentErrorCode, message: string): Error {
  return new sdk.TerminalError(`${code}: ${message}`, { errorCode: STATUS[code] ?? 500 });
}
