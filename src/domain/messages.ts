import { z } from 'zod';
import { jsonProblem } from './json-problem.js';

/** Content blocks of an assistant message. Tool-call arguments are always a parsed JSON object. */
export const TextBlockSchema = z.object({ type: z.literal('text'), text: z.string() });
export const ThinkingBlockSchema = z.object({ type: z.literal('thinking'), text: z.string() });
export const ToolCallBlockSchema = z.object({
  type: z.literal('toolCall'),
  id: z.string().min(1),
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
export const AssistantBlockSchema = z.discriminatedUnion('type', [
  TextBlockSchema,
  ThinkingBlockSchema,
  ToolCallBlockSchema,
]);

export const UsageSchema = z.object({
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  cacheRead: z.number().int().nonnegative().optional(),
  cacheWrite: z.number().int().nonnegative().optional(),
});

export const StopReasonSchema = z.enum(['stop', 'toolUse', 'length', 'error', 'aborted']);

export const UserMessageSchema = z.object({ role: z.literal('user'), content: z.string() });
export const AssistantMessageSchema = z.object({
  role: z.literal('assistant'),
  content: z.array(AssistantBlockSchema),
  stopReason: StopReasonSchema,
  model: z.string().optional(),
  usage: UsageSchema.optional(),
  errorMessage: z.string().optional(),
});
export const ToolResultMessageSchema = z.object({
  role: z.literal('toolResult'),
  toolCallId: z.string().min(1),
  toolName: z.string(),
  content: z.string(),
  isError: z.boolean(),
});
/**
 * An application message kept in history (notes, UI markers). It reaches the model only when
 * `includeInContext` is true, and then as user text. `data` is any JSON value.
 */
export const CustomMessageSchema = z.object({
  role: z.literal('custom'),
  customType: z.string().min(1),
  content: z.string(),
  includeInContext: z.boolean().default(false),
  data: z
    .unknown()
    .optional()
    .superRefine((data, ctx) => {
      const problem = data === undefined ? null : jsonProblem(data, 'data');
      if (problem) ctx.addIssue({ code: 'custom', message: `${problem}, which JSON cannot hold` });
    }),
});

export const MessageSchema = z.discriminatedUnion('role', [
  UserMessageSchema,
  AssistantMessageSchema,
  ToolResultMessageSchema,
  CustomMessageSchema,
]);

/** What `prompt`, `steer` and `followUp` accept: a message, or a string meaning user text. */
export const MessageInputSchema = z.union([z.string(), MessageSchema]);

export type TextBlock = z.infer<typeof TextBlockSchema>;
export type ThinkingBlock = z.infer<typeof ThinkingBlockSchema>;
/** A tool call in an assistant message: `{ type: 'toolCall', id, name, arguments }`. */
export type ToolCallBlock = z.infer<typeof ToolCallBlockSchema>;
/** A block of an assistant message: text, thinking or a tool call. */
export type AssistantBlock = z.infer<typeof AssistantBlockSchema>;
/** Tokens of one model attempt: `{ input, output, cacheRead?, cacheWrite? }`. */
export type Usage = z.infer<typeof UsageSchema>;
export type StopReason = z.infer<typeof StopReasonSchema>;
/** `{ role: 'user', content }`: a prompt, a steering or follow-up message. */
export type UserMessage = z.infer<typeof UserMessageSchema>;
/** `{ role: 'assistant', content: blocks, stopReason, model?, usage?, errorMessage? }`: a model's reply. */
export type AssistantMessage = z.infer<typeof AssistantMessageSchema>;
/** `{ role: 'toolResult', toolCallId, toolName, content, isError }`: the one result of a tool call. */
export type ToolResultMessage = z.infer<typeof ToolResultMessageSchema>;
/**
 * An application's own message in the history (`customType`, `data`), sent to the model only with `includeInContext`.
 */
export type CustomMessage = z.infer<typeof CustomMessageSchema>;
/** A message of the history. */
export type Message = z.infer<typeof MessageSchema>;
/** What `prompt`, `steer` and `followUp` take: a message, or a string (user text). */
export type MessageInput = z.input<typeof MessageInputSchema>;

/** Normalizes `prompt`/`steer` input: a string becomes a user message; a message is validated. */
export function toMessage(input: MessageInput): Message {
  return typeof input === 'string' ? { role: 'user', content: input } : MessageSchema.parse(input);
}

/** The tool-call blocks of an assistant message, in order. */
export function toolCallsOf(message: AssistantMessage): ToolCallBlock[] {
  return message.content.filter((block): block is ToolCallBlock => block.type === 'toolCall');
}

/** The text of an assistant message, its text blocks joined. */
export function textOf(message: AssistantMessage): string {
  return message.content
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('');
}
