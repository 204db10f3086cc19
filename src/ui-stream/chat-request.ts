import { z } from 'zod';
import { AgentError } from '../domain/errors.js';
import type { ApprovalDecision } from '../policies/types.js';
import { parseApprovalId, type ApprovalRef } from './approval-id.js';

/** A part as the client sends it: only what the handler reads is checked. */
const PartSchema = z.looseObject({ type: z.string() });
const UIMessageSchema = z.looseObject({
  id: z.string().optional(),
  role: z.enum(['user', 'assistant', 'system']),
  parts: z.array(PartSchema),
});

/**
 * The body `useChat` posts (`{ id, messages, trigger, messageId }`), or the smaller one an app sends
 * with `prepareSendMessagesRequest` (`{ id, message }`): the session holds the history, so only the
 * new message is read.
 */
const ChatBodySchema = z.looseObject({
  id: z.string().min(1).max(512),
  messages: z.array(UIMessageSchema).optional(),
  message: UIMessageSchema.optional(),
  trigger: z.string().optional(),
  messageId: z.string().optional(),
});

type ClientMessage = z.infer<typeof UIMessageSchema>;

/** An approval the user answered in the UI (`addToolApprovalResponse`). */
export interface ApprovalAnswer {
  ref: ApprovalRef;
  approvalId: string;
  decision: ApprovalDecision;
}

export type ChatRequest =
  | { kind: 'message'; chatId: string; text: string }
  /** Answers to approval requests: `messageId` is the assistant message the response continues. */
  | { kind: 'approvals'; chatId: string; messageId: string; answers: ApprovalAnswer[] };

/** Reads a useChat POST body; anything else is `AgentError('InvalidInput')` saying what is wrong. */
export function parseChatRequest(body: unknown): ChatRequest {
  const parsed = ChatBodySchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    throw new AgentError('InvalidInput', `chatHandler: not a useChat request body (${where}${issue?.message}).`);
  }
  const { id: chatId, trigger } = parsed.data;
  if (trigger === 'regenerate-message') {
    throw new AgentError(
      'InvalidInput',
      'chatHandler: regenerate is not supported: the session keeps its history (send a new message instead).',
    );
  }
  const message = parsed.data.message ?? parsed.data.messages?.at(-1);
  if (!message) throw new AgentError('InvalidInput', 'chatHandler: the request has no message.');
  if (message.role === 'assistant') return approvalsOf(chatId, parsed.data.messageId ?? message.id, message);
  if (message.role !== 'user')
    throw new AgentError('InvalidInput', `chatHandler: a ${message.role} message cannot be sent.`);
  const text = message.parts
    .flatMap((part) => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : []))
    .join('\n');
  if (text.trim() === '') throw new AgentError('InvalidInput', 'chatHandler: the message has no text.');
  return { kind: 'message', chatId, text };
}

/** The approvals answered in the assistant message the client sends back after `addToolApprovalResponse`. */
function approvalsOf(chatId: string, messageId: string | undefined, message: ClientMessage): ChatRequest {
  const answers = message.parts.flatMap((part): ApprovalAnswer[] => {
    const approval = part.approval as { id?: unknown; approved?: unknown; reason?: unknown } | undefined;
    if (part.state !== 'approval-responded' || typeof approval?.id !== 'string') return [];
    const ref = parseApprovalId(approval.id);
    if (!ref || typeof approval.approved !== 'boolean') return [];
    const reason = typeof approval.reason === 'string' && approval.reason !== '' ? approval.reason : undefined;
    const decision: ApprovalDecision = approval.approved
      ? { approved: true }
      : { approved: false, ...(reason ? { reason } : {}) };
    return [{ ref, approvalId: approval.id, decision }];
  });
  if (answers.length === 0 || messageId === undefined) {
    throw new AgentError('InvalidInput', 'chatHandler: the assistant message sent back answers no approval request.');
  }
  return { kind: 'approvals', chatId, messageId, answers };
}
