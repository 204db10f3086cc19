import type { ObjectContext, ObjectOptions, ObjectSharedContext } from '@restatedev/restate-sdk';
import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import type { AgentEvent } from '../domain/events.js';
import { toMessage, type Message, type MessageInput } from '../domain/messages.js';
import type { RunResult } from '../domain/outcomes.js';
import type { PendingApproval } from '../store/types.js';
import type { AgentOptions } from '../runtime/options.js';
import type { SteerReceipt } from '../runtime/run-session.js';
import { inboxClient, inboxHandlers } from './inbox.js';
import {
  ActiveRunSchema,
  EventsInputSchema,
  INBOX_PREFIX,
  ResolveApprovalInputSchema,
  type InboxItem,
} from './protocol.js';
import { runPrompt } from './prompt.js';
import { refusal, restateSdk, type RestateSdk } from './sdk.js';
import { parseHistory, readHead, readEvents, readSession } from './state-store.js';

export interface AgentObjectOptions<Name extends string = string> {
  /** The virtual object's name (the path segment in `POST /<name>/<sessionId>/prompt`). */
  name: Name;
  /** The agent of a session, without `store`/`sessionId`; may be called more than once per invocation. */
  agent: (sessionId: string) => AgentOptions;
  /** Restate's options for the object (retry policy, inactivity and abort timeouts, retention). */
  options?: ObjectOptions;
}

function parsed<T>(sdk: RestateSdk, schema: z.ZodType<T>, input: unknown, what: string): T {
  const result = schema.safeParse(input);
  if (!result.success) throw refusal(sdk, 'InvalidInput', `${what}: ${z.prettifyError(result.error)}`);
  return result.data;
}

function messageOf(sdk: RestateSdk, input: unknown, what: string): Message {
  try {
    return toMessage(input as MessageInput);
  } catch (error) {
    throw refusal(sdk, 'InvalidInput', `${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function sessionKey(sdk: RestateSdk, key: string): string {
  if (key.startsWith(INBOX_PREFIX))
    throw refusal(sdk, 'InvalidInput', `a session id may not start with "${INBOX_PREFIX}"`);
  return key;
}

/**
 * A Restate virtual object running one agent session per key: `prompt` is exclusive
 * (one run per session; Restate's single writer per key replaces leases), the others are shared and
 * reach a busy run through the session's inbox.
 */
export function agentObject<Name extends string>(options: AgentObjectOptions<Name>) {
  const sdk = restateSdk();
  if (typeof options?.name !== 'string' || options.name === '' || typeof options.agent !== 'function') {
    throw new AgentError('InvalidOptions', 'agentObject needs { name: string, agent: (sessionId) => AgentOptions }.');
  }
  const shared = sdk.handlers.object.shared;
  const enqueue = async (
    ctx: ObjectSharedContext,
    kind: 'steer' | 'followUp',
    input: unknown,
  ): Promise<SteerReceipt> => {
    const message = messageOf(sdk, input, kind);
    const receipt = ctx.awakeable<SteerReceipt>();
    const { live } = await inboxClient(sdk, ctx, options.name, sessionKey(sdk, ctx.key)).push({
      kind,
      message,
      receipt: receipt.id,
    });
    // No run is open: the message waits for the next one.
    return live ? await receipt.promise : { status: 'stillQueued' };
  };
  return sdk.object({
    name: options.name,
    ...(options.options ? { options: options.options } : {}),
    handlers: {
      prompt: async (ctx: ObjectContext, input: MessageInput | MessageInput[]): Promise<RunResult> =>
        runPrompt(sdk, ctx, {
          objectName: options.name,
          sessionId: sessionKey(sdk, ctx.key),
          agent: options.agent,
          input,
        }),
      steer: shared(async (ctx: ObjectSharedContext, input: MessageInput) => enqueue(ctx, 'steer', input)),
      followUp: shared(async (ctx: ObjectSharedContext, input: MessageInput) => enqueue(ctx, 'followUp', input)),
      abort: shared(async (ctx: ObjectSharedContext, reason?: string): Promise<null> => {
        const sessionId = sessionKey(sdk, ctx.key);
        const active = ActiveRunSchema.nullable().parse(await ctx.get('active'));
        if (!active) return null;
        const item: InboxItem = typeof reason === 'string' ? { kind: 'abort', reason } : { kind: 'abort' };
        // The reason first, then the cancellation: the run reads the reason when it is cancelled.
        await inboxClient(sdk, ctx, options.name, sessionId).push(item);
        ctx.cancel(active.invocationId as never);
        return null;
      }),
      pendingApprovals: shared(async (ctx: ObjectSharedContext): Promise<PendingApproval[]> => {
        return (await readHead(sessionKey(sdk, ctx.key), ctx))?.run?.turn?.pendingApprovals ?? [];
      }),
      resolveApproval: shared(async (ctx: ObjectSharedContext, input: unknown): Promise<null> => {
        const sessionId = sessionKey(sdk, ctx.key);
        const { toolCallId, decision, version } = parsed(sdk, ResolveApprovalInputSchema, input, 'resolveApproval');
        const waiting = (await readHead(sessionId, ctx))?.run?.turn?.pendingApprovals ?? [];
        const pending = waiting.find((candidate) => candidate.toolCallId === toolCallId);
        if (!pending) {
          const which = waiting.map((candidate) => `"${candidate.toolCallId}"`).join(', ');
          throw refusal(
            sdk,
            'UnknownToolCall',
            `no approval is pending for tool call "${toolCallId}"` + (which ? ` (pending: ${which})` : ''),
          );
        }
        if (pending.version !== version) {
          throw refusal(
            sdk,
            'StaleVersion',
            `version ${version} is stale; the approval for "${toolCallId}" was requested at version ${pending.version}`,
          );
        }
        await inboxClient(sdk, ctx, options.name, sessionId).push({ kind: 'approval', toolCallId, decision, version });
        return null;
      }),
      messages: shared(async (ctx: ObjectSharedContext): Promise<Message[]> => {
        const sessionId = sessionKey(sdk, ctx.key);
        return parseHistory(sessionId, (await readSession(sessionId, ctx)).history);
      }),
      events: shared(async (ctx: ObjectSharedContext, input: unknown): Promise<AgentEvent[]> => {
        const { afterSeq, runId } = parsed(sdk, EventsInputSchema, input, 'events');
        return readEvents(sessionKey(sdk, ctx.key), ctx, runId === undefined ? { afterSeq } : { afterSeq, runId });
      }),
      ...inboxHandlers(sdk),
    },
  });
}
