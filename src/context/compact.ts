import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import type { CustomMessage, Message } from '../domain/messages.js';
import { TokenLedger, estimateTokens } from './estimate.js';
import { groupStarts } from './groups.js';

/** `customType` of the note compaction puts where messages were removed. */
export const COMPACTION_MARKER_TYPE = 'contextCompacted';

export const CompactOptionsSchema = z.object({
  /** Token budget for the messages (estimate of `TokenLedger`/`estimateTokens`). */
  maxTokens: z.number().nonnegative(),
  /** Most recent messages kept even over budget (rounded up to whole units). At least 1. */
  keepRecent: z.number().int().positive().optional(),
  /** Leading messages always kept (rounded up to whole units); default: the first prompt batch. */
  anchor: z.number().int().nonnegative().optional(),
  /** Insert a note where messages were removed (default true). */
  marker: z.boolean().optional(),
  /** Reuse cached estimates across calls. (`z.custom`: its declared type is the same in every zod 4.x.) */
  ledger: z
    .custom<TokenLedger>((value) => value instanceof TokenLedger, 'Input not instance of TokenLedger')
    .optional(),
});
/** `compactMessages` options: the token budget, recent messages always kept, whether to leave a marker message. */
export type CompactOptions = z.input<typeof CompactOptionsSchema>;

/**
 * Returns a history that fits `maxTokens`: the anchor, then (if anything was removed) one marker
 * note, then the most recent units that fit. Older units between the two are dropped whole, so an
 * assistant tool-call message and its results are kept or dropped together and, when the input
 * satisfies tool-call/result parity, so does the output. The output never has more messages or
 * more estimated tokens than the input, and always keeps the last message.
 *
 * The marker is a `custom` message (`customType: 'contextCompacted'`, `includeInContext: true`,
 * `data: { removed }`): the model reads it as user text, while code can tell it from a real user
 * turn, and a later compaction that drops it folds its count into the new marker.
 *
 * When the whole history already fits, or nothing can be dropped, the input array itself is
 * returned. When even anchor + recent window exceed the budget, everything between them is dropped
 * (the best possible) and the result is over budget. Bad options throw `AgentError('InvalidOptions')`.
 */
export function compactMessages(messages: Message[], options: CompactOptions): Message[] {
  const parsed = CompactOptionsSchema.safeParse(options);
  if (!parsed.success) {
    throw new AgentError('InvalidOptions', `compactMessages: ${z.prettifyError(parsed.error)}`);
  }
  const { maxTokens, keepRecent = 1, marker = true } = parsed.data;
  const ledger = parsed.data.ledger ?? new TokenLedger();
  const count = messages.length;
  if (count === 0) return messages;

  const starts = groupStarts(messages);
  const groupEnd = (group: number) => (group + 1 < starts.length ? starts[group + 1] : count);
  const anchorCount = Math.min(parsed.data.anchor ?? defaultAnchor(messages), count);
  // Units that start inside the anchor belong to it whole.
  let firstMiddle = 0;
  while (firstMiddle < starts.length && starts[firstMiddle] < anchorCount) firstMiddle++;
  // The recent window: the fewest trailing units holding at least `keepRecent` messages.
  let firstRecent = starts.length - 1;
  while (firstRecent > 0 && count - starts[firstRecent] < keepRecent) firstRecent--;
  if (firstRecent <= firstMiddle) return messages;

  const groupTokens = starts.map((start, group) => ledger.messages(messages.slice(start, groupEnd(group))));
  const sum = (from: number, to: number) => groupTokens.slice(from, to).reduce((a, b) => a + b, 0);
  const fixed = sum(0, firstMiddle) + sum(firstRecent, starts.length);
  const total = fixed + sum(firstMiddle, firstRecent);
  if (total <= maxTokens) return messages;

  // Messages each unit stands for (an old marker counts for the messages it replaced).
  const groupRemoved = starts.map((start, group) => {
    let removed = 0;
    for (let index = start; index < groupEnd(group); index++) removed += markerRemovedCount(messages[index]) ?? 1;
    return removed;
  });
  const noteFor = (removed: number) => (marker ? compactionMarker(removed) : null);
  const noteTokens = (note: Message | null) => (note ? estimateTokens(note) : 0);

  // Keep the longest run of recent middle units that fits: one pass from the newest unit back.
  let chosen = firstRecent;
  let suffix = 0;
  let removed = groupRemoved.slice(firstMiddle, firstRecent).reduce((a, b) => a + b, 0);
  let chosenRemoved = removed;
  for (let keptFrom = firstRecent - 1; keptFrom > firstMiddle; keptFrom--) {
    suffix += groupTokens[keptFrom];
    removed -= groupRemoved[keptFrom];
    if (fixed + suffix > maxTokens) break;
    if (fixed + suffix + noteTokens(noteFor(removed)) <= maxTokens) {
      chosen = keptFrom;
      chosenRemoved = removed;
    }
  }

  const note = noteFor(chosenRemoved);
  if (fixed + sum(chosen, firstRecent) + noteTokens(note) >= total) return messages;
  const kept = messages.slice(0, starts[firstMiddle]);
  if (note) kept.push(note);
  for (let index = starts[chosen]; index < count; index++) kept.push(messages[index]);
  return kept;
}

/** The note compaction inserts where `removed` messages were dropped. */
export function compactionMarker(removed: number): CustomMessage {
  const what = removed === 1 ? '1 earlier message was' : `${removed} earlier messages were`;
  return {
    role: 'custom',
    customType: COMPACTION_MARKER_TYPE,
    content: `[${what} removed to fit the context window]`,
    includeInContext: true,
    data: { removed },
  };
}

export function isCompactionMarker(message: Message): message is CustomMessage {
  return message.role === 'custom' && message.customType === COMPACTION_MARKER_TYPE;
}

function markerRemovedCount(message: Message): number | null {
  if (!isCompactionMarker(message)) return null;
  const data = message.data as { removed?: unknown } | undefined;
  return typeof data?.removed === 'number' && Number.isInteger(data.removed) && data.removed >= 0 ? data.removed : null;
}

/**
 * Default anchor: everything up to the first user message and the batch that follows it
 * (consecutive user messages and custom notes, compaction markers excepted); 0 without a user
 * message.
 */
function defaultAnchor(messages: readonly Message[]): number {
  const firstUser = messages.findIndex((message) => message.role === 'user');
  if (firstUser < 0) return 0;
  let end = firstUser + 1;
  while (end < messages.length) {
    const message = messages[end];
    if (message.role !== 'user' && !(message.role === 'custom' && !isCompactionMarker(message))) break;
    end++;
  }
  return end;
}
