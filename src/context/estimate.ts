import type { Message } from '../domain/messages.js';
import type { ToolSpec } from '../model/port.js';

/**
 * Token estimate — a fast, deterministic stand-in for a provider tokenizer. The rule:
 *
 * - every message counts `ceil(chars / 4) + 4` tokens (4 = role/framing overhead), where `chars` is
 *   - user: the content's length;
 *   - assistant: text and thinking lengths, plus for each tool call its id, name and the length of
 *     `JSON.stringify(arguments)`;
 *   - toolResult: the content, tool name and tool-call id lengths;
 *   - custom: the content's length when `includeInContext` (it reaches the model as user text);
 *     a custom message that never reaches the model counts 0, overhead included.
 * - the system prompt counts `ceil(chars / 4) + 4` when present;
 * - each tool spec counts `ceil((name + description + JSON.stringify(parameters)) / 4) + 4`.
 *
 * Lengths are UTF-16 code units. The estimate is additive per message, so it can be cached.
 */
export const CHARS_PER_TOKEN = 4;
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** Estimated tokens of one message (see the rule above). */
export function estimateTokens(message: Message): number {
  const chars = contextChars(message);
  return chars === null ? 0 : Math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
}

/** Estimated tokens of the system prompt; 0 when there is none. */
export function estimateSystemPromptTokens(systemPrompt: string | undefined): number {
  if (systemPrompt === undefined || systemPrompt.length === 0) return 0;
  return Math.ceil(systemPrompt.length / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
}

/** Estimated tokens of one tool spec sent to the provider. */
export function estimateToolSpecTokens(tool: ToolSpec): number {
  const chars = tool.name.length + tool.description.length + jsonLength(tool.parameters);
  return Math.ceil(chars / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
}

/** Estimated tokens of a whole model request: messages, system prompt and tool specs. */
export function estimateContextTokens(
  messages: readonly Message[],
  systemPrompt?: string,
  tools?: readonly ToolSpec[],
): number {
  let total = estimateSystemPromptTokens(systemPrompt);
  for (const tool of tools ?? []) total += estimateToolSpecTokens(tool);
  for (const message of messages) total += estimateTokens(message);
  return total;
}

/**
 * The incremental form: per-message (and per-tool-spec) estimates are cached by object identity in
 * WeakMaps, so estimating a long history before every model call only re-estimates new messages.
 * Messages are treated as immutable values: one mutated in place after being estimated keeps its
 * old estimate.
 */
export class TokenLedger {
  private readonly byMessage = new WeakMap<Message, number>();
  private readonly byTool = new WeakMap<ToolSpec, number>();

  message(message: Message): number {
    let tokens = this.byMessage.get(message);
    if (tokens === undefined) {
      tokens = estimateTokens(message);
      this.byMessage.set(message, tokens);
    }
    return tokens;
  }

  messages(messages: readonly Message[]): number {
    let total = 0;
    for (const message of messages) total += this.message(message);
    return total;
  }

  /** The fixed part of a request: system prompt and tool specs. */
  overhead(systemPrompt?: string, tools?: readonly ToolSpec[]): number {
    let total = estimateSystemPromptTokens(systemPrompt);
    for (const tool of tools ?? []) {
      let tokens = this.byTool.get(tool);
      if (tokens === undefined) {
        tokens = estimateToolSpecTokens(tool);
        this.byTool.set(tool, tokens);
      }
      total += tokens;
    }
    return total;
  }

  /** Same value as `estimateContextTokens`, from the cache. */
  context(messages: readonly Message[], systemPrompt?: string, tools?: readonly ToolSpec[]): number {
    return this.overhead(systemPrompt, tools) + this.messages(messages);
  }
}

/** Characters that reach the model, or null when the message never does. */
function contextChars(message: Message): number | null {
  switch (message.role) {
    case 'user':
      return message.content.length;
    case 'assistant': {
      let chars = 0;
      for (const block of message.content) {
        if (block.type === 'toolCall') chars += block.id.length + block.name.length + jsonLength(block.arguments);
        else chars += block.text.length;
      }
      return chars;
    }
    case 'toolResult':
      return message.content.length + message.toolName.length + message.toolCallId.length;
    case 'custom':
      return message.includeInContext ? message.content.length : null;
  }
}

/** JSON length of a value; values JSON cannot encode (cycles, BigInt) fall back to `String(value)`. */
function jsonLength(value: unknown): number {
  try {
    return (JSON.stringify(value) ?? '').length;
  } catch {
    return String(value).length;
  }
}
