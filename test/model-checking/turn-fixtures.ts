import type { ModelReply } from '../../machines/turn.types.js';
import { modelError } from '../../src/domain/errors.js';
import type { AssistantMessage, Message, ToolCallBlock } from '../../src/domain/messages.js';

/** The payloads of the turn machine's event alphabet: messages, model replies, tool calls. */

export const PROMPT: Message = { role: 'user', content: 'summarise a.txt' };
export const POLICY_NOTE: Message = { role: 'user', content: 'note from a policy' };
export const REPORT_TOOL = 'final_report';
export const PROGRESS_TOOL = 'note_progress';

/** The tool registry the stand-in preprocessing knows: `write` needs approval when approvals are on. */
export const KNOWN_TOOLS: Readonly<Record<string, { requiresApproval: boolean }>> = {
  read: { requiresApproval: false },
  write: { requiresApproval: true },
  [REPORT_TOOL]: { requiresApproval: false },
  [PROGRESS_TOOL]: { requiresApproval: false },
};

const call = (id: string, name: string, args: Record<string, unknown> = { path: 'a.txt' }): ToolCallBlock => ({
  type: 'toolCall',
  id,
  name,
  arguments: args,
});
const assistant = (
  content: AssistantMessage['content'],
  stopReason: AssistantMessage['stopReason'],
  errorMessage?: string,
): AssistantMessage => ({
  role: 'assistant',
  content,
  stopReason,
  model: 'model-a',
  ...(errorMessage ? { errorMessage } : {}),
});
const text = (value: string) => ({ type: 'text' as const, text: value });
const ok = (message: AssistantMessage): ModelReply => ({
  called: true,
  published: false,
  message,
  deltas: [],
  error: null,
  invalidCalls: [],
});
const failed = (error: ReturnType<typeof modelError>, content: AssistantMessage['content'] = []): ModelReply => ({
  called: true,
  published: false,
  message: assistant(content, error.kind === 'aborted' ? 'aborted' : 'error', error.message),
  deltas: [],
  error,
  invalidCalls: [],
});

/**
 * Model replies, one per class the turn must tell apart. `notCalled` is only sent after ABORT
 * (the runtime reports it when the run was aborted before the request went out).
 */
export const REPLIES = {
  text: ok(assistant([text('All done.')], 'stop')),
  oneCall: ok(assistant([text('Reading.'), call('call_1', 'read')], 'toolUse')),
  twoCalls: ok(assistant([call('call_1', 'read'), call('call_2', 'write', { path: 'b.txt' })], 'toolUse')),
  /** A batch of three calls that each need approval: asked together, decided in any order. */
  threeWrites: ok(
    assistant(
      [
        call('call_6', 'write', { path: 'a.txt' }),
        call('call_7', 'write', { path: 'b.txt' }),
        call('call_8', 'write', { path: 'c.txt' }),
      ],
      'toolUse',
    ),
  ),
  unknownTool: ok(assistant([call('call_3', 'nope'), call('call_1', 'read')], 'toolUse')),
  malformedArgs: {
    ...ok(assistant([call('call_1', 'read', {})], 'toolUse')),
    invalidCalls: [{ id: 'call_1', reason: 'malformedJson', rawArguments: '{"path":' }],
  },
  truncated: {
    ...ok(assistant([text('Reading.'), call('call_1', 'read', {})], 'length')),
    invalidCalls: [{ id: 'call_1', reason: 'truncated', rawArguments: '{"pa' }],
  },
  report: ok(assistant([call('call_4', REPORT_TOOL, { summary: 'a.txt is short' })], 'toolUse')),
  progress: ok(assistant([call('call_5', PROGRESS_TOOL, { note: 'halfway' })], 'toolUse')),
  rateLimited: failed(modelError('rateLimit', '429 slow down', { retryAfterMs: 2_000 })),
  /** The model stream was silent for modelIdleMs (the runtime's timer on the agent's clock). */
  idleTimeout: failed(modelError('timeout', 'model stream silent for 600000 ms')),
  /** The stream broke the port's contract (a wrong shape, a duplicate tool-call start, a throw). */
  invalidResponse: failed(
    modelError('invalidResponse', 'invalid model response: a second toolCallStart for the open tool-call index 0'),
    [call('call_1', 'read')],
  ),
  contextOverflow: failed(modelError('contextOverflow', 'prompt is too long')),
  authFailed: failed(modelError('auth', '401 bad key')),
  aborted: failed(modelError('aborted', 'aborted'), [text('Read'), call('call_1', 'read')]),
  /** Live streaming: the text was already shown when the rate limit cut the stream (never redone). */
  rateLimitedAfterLiveText: {
    ...failed(modelError('rateLimit', '429 slow down', { retryAfterMs: 2_000 }), [text('Partly shown')]),
    published: true,
  },
  notCalled: {
    called: false,
    published: false,
    message: assistant([], 'error', 'aborted'),
    deltas: [],
    error: modelError('aborted', 'aborted'),
    invalidCalls: [],
  },
  /** The closing attempt of a turn a deferred failure left open: no model call, an empty aborted message. */
  closing: ok(assistant([], 'aborted')),
  /** A stream cut by a network error after one complete tool call (the accumulator keeps the block). */
  cutAfterCall: failed(modelError('network', 'socket hang up'), [call('call_1', 'read')]),
  /** The same with a non-retryable error. */
  rejectedAfterCall: failed(modelError('badRequest', '400 invalid request'), [call('call_1', 'read')]),
} satisfies Record<string, ModelReply>;

export type ReplyName = keyof typeof REPLIES;

/** The replies every turn configuration is checked with (the alphabet's model part). */
export const STANDARD_REPLIES: readonly ReplyName[] = [
  'text',
  'oneCall',
  'twoCalls',
  'unknownTool',
  'malformedArgs',
  'truncated',
  'rateLimited',
  'idleTimeout',
  'invalidResponse',
  'contextOverflow',
  'rateLimitedAfterLiveText',
  'authFailed',
  'aborted',
];
