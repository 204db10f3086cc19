import type { ModelError } from './errors.js';

/**
 * Secrets never leave in diagnostics. Error texts (a provider's 401 body may echo the key; a
 * gateway may echo the request's headers) are cleaned before they reach events, results, stored
 * sessions or spans:
 * - the values an adapter knows to be secret (its API key, its auth headers) wherever they appear;
 * - the value of an `Authorization`, `Proxy-Authorization`, `x-api-key`, `api-key` or
 *   `x-goog-api-key` header, in a raw header line or in JSON, and any `Bearer <token>`;
 * - `sk-…`-shaped tokens (OpenAI, Anthropic and many gateways issue keys of that shape).
 * Each becomes `[redacted]`. A known secret shorter than 8 characters is not searched for: it would
 * blank ordinary words, and no provider issues keys that short.
 */

export const REDACTED = '[redacted]';
const MIN_SECRET_LENGTH = 8;

const HEADER_VALUE =
  /((?:proxy-)?authorization|x-api-key|x-goog-api-key|api-key)(\\?["']?\s*[:=]\s*\\?["']?)(?!\[redacted\])[^\s"'\\,;})\]][^"'\\\r\n,;})\]]*/gi;
const BEARER = /\bBearer\s+(?!\[redacted\])[A-Za-z0-9._~+/=-]+/g;
const SK_TOKEN = /(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{12,}/g;

/** The text with the known secrets and every secret-shaped value replaced by `[redacted]`. */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let clean = text;
  // Longest first: a key that contains another known secret is replaced whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= MIN_SECRET_LENGTH) clean = clean.split(secret).join(REDACTED);
  }
  return clean
    .replace(HEADER_VALUE, (_match, name: string, separator: string) => `${name}${separator}${REDACTED}`)
    .replace(BEARER, `Bearer ${REDACTED}`)
    .replace(SK_TOKEN, REDACTED);
}

/** A classified error whose message is redacted (the same object when there was nothing to redact). */
export function redactModelError(error: ModelError, secrets: readonly string[] = []): ModelError {
  const message = redactSecrets(error.message, secrets);
  return message === error.message ? error : { ...error, message };
}

const SECRET_HEADER = /auth|key|token|secret|cookie/i;

/**
 * The secrets an adapter holds: its key(s) and the values of its auth-like headers (also without a
 * `Bearer ` prefix). Absent and empty values are skipped.
 */
export function knownSecrets(
  keys: ReadonlyArray<string | null | undefined>,
  headers?: Readonly<Record<string, string | null | undefined>>,
): string[] {
  const values = [...keys];
  for (const [name, value] of Object.entries(headers ?? {})) if (SECRET_HEADER.test(name)) values.push(value);
  const secrets = new Set<string>();
  for (const value of values) {
    if (typeof value !== 'string' || value === '') continue;
    secrets.add(value);
    const bearer = /^Bearer\s+(.+)$/i.exec(value);
    if (bearer?.[1]) secrets.add(bearer[1]);
  }
  return [...secrets];
}
