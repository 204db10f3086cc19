import { z } from 'zod';

/** The classified provider/model error taxonomy. `retryable` is decided by the kind, never ad hoc. */
export const ErrorKindSchema = z.enum([
  'rateLimit',
  'overloaded',
  'network',
  'timeout',
  'contextOverflow',
  'auth',
  'badRequest',
  'aborted',
  'unknown',
  /** The model stream broke its contract: an event of the wrong shape, a duplicate tool-call start, a throw. */
  'invalidResponse',
  /** A bug inside agentchart or a throw it could not attribute to user code: the run ends fatally. */
  'internal',
]);
export type ErrorKind = z.infer<typeof ErrorKindSchema>;

const RETRYABLE_KINDS: ReadonlySet<ErrorKind> = new Set([
  'rateLimit',
  'overloaded',
  'network',
  'timeout',
  'invalidResponse',
]);

export const ModelErrorSchema = z.object({
  kind: ErrorKindSchema,
  message: z.string(),
  retryable: z.boolean(),
  retryAfterMs: z.number().nonnegative().optional(),
  status: z.number().int().optional(),
});
export type ModelError = z.infer<typeof ModelErrorSchema>;

export function isRetryableKind(kind: ErrorKind): boolean {
  return RETRYABLE_KINDS.has(kind);
}

/** Builds a classified error; `retryable` follows from the kind. */
export function modelError(
  kind: ErrorKind,
  message?: string,
  extra: { retryAfterMs?: number; status?: number } = {},
): ModelError {
  return {
    kind,
    message: message ?? kind,
    retryable: isRetryableKind(kind),
    ...(extra.retryAfterMs !== undefined ? { retryAfterMs: extra.retryAfterMs } : {}),
    ...(extra.status !== undefined ? { status: extra.status } : {}),
  };
}

/** Why the runtime itself ended a run: its store failed to write a step, or another agent took the session over. */
export const RunStopCodeSchema = z.enum(['storeFailed', 'sessionLost']);
export type RunStopCode = z.infer<typeof RunStopCodeSchema>;

/**
 * Every `error.code` a run can end with (`RunResult.error`, `agentEnd.error`): the error kind of a failed run
 * (`internal` for a throw inside the runtime), `aborted` for an aborted run, or the runtime's stop.
 */
export const RunErrorCodeSchema = z.enum([...ErrorKindSchema.options, ...RunStopCodeSchema.options]);
export type RunErrorCode = z.infer<typeof RunErrorCodeSchema>;

/**
 * Every key of `counters.failureCodes`: failed model attempts by error kind (an abort is no failure), report-mode
 * turns that did no work, and runs the runtime ended (`internal`, `storeFailed`, `sessionLost`).
 */
export const FailureCodeSchema = z.enum([
  ...ErrorKindSchema.exclude(['aborted']).options,
  'reportTurnWithoutWork',
  ...RunStopCodeSchema.options,
]);
export type FailureCode = z.infer<typeof FailureCodeSchema>;

/** Typed errors thrown synchronously by the public API (never for model/tool failures). */
export type AgentErrorCode =
  | 'AlreadyRunning'
  | 'NotReady'
  | 'NothingToContinue'
  | 'InvalidInput'
  | 'InvalidOptions'
  | 'StaleVersion'
  | 'UnknownToolCall'
  | 'StoreCorrupted'
  | 'StoreUnavailable'
  | 'StoreFailed'
  | 'SessionBusy'
  | 'SessionLost'
  | 'SessionNotFound'
  | 'MissingDependency'
  | 'McpUnavailable'
  | 'McpToolConflict'
  /** The agent was closed: it takes no prompt, message or answer afterwards (create a new one). */
  | 'Closed';

/**
 * A call of the public API that is refused: thrown at once, its `code` says why (docs/errors.md lists every code).
 * Model and tool failures never throw: they end the run with `result.error`.
 */
export class AgentError extends Error {
  /** Always `'AgentError'`. */
  override readonly name = 'AgentError';
  constructor(
    /** Why the call was refused. */
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(message);
  }
}
