import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from '../domain/messages.js';

/** A history entry as a provider sees it: custom messages are resolved to user text or dropped. */
export type ProviderMessage = UserMessage | AssistantMessage | ToolResultMessage;

/**
 * The history a provider receives. A custom message reaches the model only when
 * `includeInContext` is true, and then as user text; assistant thinking stays in our history only
 * (providers that verify thinking need a signature our blocks do not carry).
 */
export function providerMessages(messages: readonly Message[]): ProviderMessage[] {
  const out: ProviderMessage[] = [];
  for (const message of messages) {
    if (message.role === 'custom') {
      if (message.includeInContext) out.push({ role: 'user', content: message.content });
    } else {
      out.push(message);
    }
  }
  return out;
}

/** Text and tool calls of an assistant message; an assistant message with neither is not sent. */
export function assistantParts(message: AssistantMessage): {
  text: string;
  toolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
} {
  let text = '';
  const toolCalls: Array<{ id: string; name: string; arguments: Record<string, unknown> }> = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'toolCall') toolCalls.push({ id: block.id, name: block.name, arguments: block.arguments });
  }
  return { text, toolCalls };
}
