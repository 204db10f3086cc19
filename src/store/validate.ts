import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import { AgentEventSchema, type AgentEvent } from '../domain/events.js';
import { SessionCheckpointSchema, type SessionCheckpoint } from './types.js';

/** Parses stored JSON; anything unreadable is a typed error naming the session — never a silent reset. */
export function parseCheckpoint(sessionId: string, json: string): SessionCheckpoint {
  const parsed = SessionCheckpointSchema.safeParse(parseJson(sessionId, json, 'checkpoint'));
  if (!parsed.success) {
    throw new AgentError('StoreCorrupted', `session "${sessionId}": the stored checkpoint is invalid: ${z.prettifyError(parsed.error)}`);
  }
  if (parsed.data.sessionId !== sessionId) {
    throw new AgentError('StoreCorrupted', `session "${sessionId}": the stored checkpoint belongs to session "${parsed.data.sessionId}"`);
  }
  return parsed.data;
}

export function parseEvent(sessionId: string, json: string): AgentEvent {
  const parsed = AgentEventSchema.safeParse(parseJson(sessionId, json, 'event'));
  if (!parsed.success) throw new AgentError('StoreCorrupted', `session "${sessionId}": a stored event is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

function parseJson(sessionId: string, json: string, what: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new AgentError('StoreCorrupted', `session "${sessionId}": the stored ${what} is not valid JSON (${(error as Error).message})`);
  }
}

export function staleVersion(sessionId: string, stored: number, next: number): AgentError {
  return new AgentError('StaleVersion', `session "${sessionId}": version ${next} does not follow the stored version ${stored} (another process advanced the session)`);
}
