import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { ContextView, eventWithView } from '../domain/history-view.js';
import { checkFence, type Lease } from './lease.js';
import { MessageSchema, type Message } from '../domain/messages.js';
import {
  SessionHeadSchema,
  StoredEventSchema,
  type SessionCheckpoint,
  type SessionHead,
  type SessionStep,
  type StoredEvent,
} from './types.js';

/** Parses stored JSON; anything unreadable is a typed error naming the session — never a silent reset. */
export function parseHead(sessionId: string, json: string): SessionHead {
  const parsed = SessionHeadSchema.safeParse(parseJson(sessionId, json, 'checkpoint'));
  if (!parsed.success) {
    throw new AgentError(
      'StoreCorrupted',
      `session "${sessionId}": the stored checkpoint is invalid: ${z.prettifyError(parsed.error)}`,
    );
  }
  if (parsed.data.sessionId !== sessionId) {
    throw new AgentError(
      'StoreCorrupted',
      `session "${sessionId}": the stored checkpoint belongs to session "${parsed.data.sessionId}"`,
    );
  }
  return parsed.data;
}

export function parseMessage(sessionId: string, json: string, position: number): Message {
  const parsed = MessageSchema.safeParse(parseJson(sessionId, json, `message ${position}`));
  if (!parsed.success)
    throw new AgentError(
      'StoreCorrupted',
      `session "${sessionId}": stored message ${position} is invalid: ${z.prettifyError(parsed.error)}`,
    );
  return parsed.data;
}

export function parseStoredEvent(sessionId: string, json: string): StoredEvent {
  const parsed = StoredEventSchema.safeParse(parseJson(sessionId, json, 'event'));
  if (!parsed.success)
    throw new AgentError(
      'StoreCorrupted',
      `session "${sessionId}": a stored event is invalid: ${z.prettifyError(parsed.error)}`,
    );
  return parsed.data;
}

/** The checkpoint `load` returns: the stored head with its history (which must add up to it). */
export function assembleCheckpoint(sessionId: string, head: SessionHead, history: Message[]): SessionCheckpoint {
  if (history.length !== head.historyLength) {
    throw new AgentError(
      'StoreCorrupted',
      `session "${sessionId}": the checkpoint counts ${head.historyLength} messages, the store holds ${history.length}`,
    );
  }
  const { historyLength: _length, ...rest } = head;
  return { ...rest, history };
}

/**
 * Stored events with their `messages` references resolved against the history: as views over the
 * one loaded history (materialized on access), so loading the log of a long session does not
 * build a copy of the history per model call. `history` is read only when an event refers to it.
 */
export function expandEvents(sessionId: string, events: StoredEvent[], history: () => Message[]): AgentEvent[] {
  let messages: Message[] | null = null;
  return events.map((event) => {
    if (event.type !== 'beforeModelCall' && event.type !== 'agentEnd') return event;
    if (Array.isArray(event.messages)) return event as AgentEvent;
    const ref = event.messages;
    messages ??= history();
    if (ref.historyPrefix > messages.length) {
      throw new AgentError(
        'StoreCorrupted',
        `session "${sessionId}": event ${event.seq} of run ${event.runId} refers to ${ref.historyPrefix} messages, the store holds ${messages.length}`,
      );
    }
    return eventWithView<AgentEvent>(event, new ContextView(messages, ref.historyPrefix, ref.tail));
  });
}

/**
 * The checks every store makes before it writes a step: no newer lease fenced its token, the version
 * follows the stored one, and the history change starts inside the stored history and ends at the
 * checkpoint's length.
 */
export function checkStep(
  sessionId: string,
  stored: { version: number; historyLength: number; lease?: Lease | null },
  step: SessionStep,
): void {
  const { checkpoint, history } = step;
  checkFence(sessionId, stored.lease ?? null, step.token);
  if (checkpoint.version !== stored.version + 1) throw staleVersion(sessionId, stored.version, checkpoint.version);
  if (history.from > stored.historyLength || history.from + history.messages.length !== checkpoint.historyLength) {
    throw new AgentError(
      'InvalidInput',
      `session "${sessionId}": the step replaces messages from ${history.from} with ${history.messages.length} (stored ${stored.historyLength}) but its checkpoint counts ${checkpoint.historyLength}`,
    );
  }
}

function parseJson(sessionId: string, json: string, what: string): unknown {
  try {
    return JSON.parse(json);
  } catch (error) {
    throw new AgentError(
      'StoreCorrupted',
      `session "${sessionId}": the stored ${what} is not valid JSON (${(error as Error).message})`,
    );
  }
}

export function staleVersion(sessionId: string, stored: number, next: number): AgentError {
  return new AgentError(
    'StaleVersion',
    `session "${sessionId}": version ${next} does not follow the stored version ${stored} (another process advanced the session)`,
  );
}
