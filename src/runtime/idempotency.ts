/**
 * `ctx.idempotencyKey`: one call of the session for its whole life. A provider's call id alone is
 * not enough (providers reuse ids across turns; the OpenAI adapter names id-less calls
 * `call_<index>`), so the key is the session, the turn the call belongs to (a turn index is never
 * reused in a session, and a resumed call keeps its turn) and the call's id — with `\` and `:`
 * escaped in the free parts, so two different calls never print the same key. The same rule on
 * every host (Restate too).
 */
export function idempotencyKeyOf(sessionKey: string, turnIndex: number, toolCallId: string): string {
  return `${escapeKeyPart(sessionKey)}:${turnIndex}:${escapeKeyPart(toolCallId)}`;
}

function escapeKeyPart(part: string): string {
  return part.replace(/[\\:]/g, (char) => `\\${char}`);
}

/** The session a key names when the agent has no store: the agent itself (its life is the session's). */
export function ephemeralSessionKey(): string {
  const id = globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `agent-${id}`;
}
