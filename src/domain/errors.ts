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
  | 'McpToolConflict';

export class AgentError extends Error {
  override readonly name = 'AgentError';
  constructor(
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(message);
  }
}
