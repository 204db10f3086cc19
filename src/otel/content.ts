import type { AssistantBlock, AssistantMessage, Message, StopReason } from '../domain/messages.js';

/**
 * Messages in the GenAI conventions' JSON shape (`gen_ai.input.messages` / `gen_ai.output.messages`):
 * `{ role, parts: [{ type: 'text' | 'reasoning' | 'tool_call' | 'tool_call_response', … }] }`.
 * Used only with `captureContent: true`.
 */
type Part =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: Record<string, unknown> }
  | { type: 'tool_call_response'; id: string; response: string };

interface GenAIMessage {
  role: 'user' | 'assistant' | 'tool';
  parts: Part[];
  finish_reason?: string;
}

/** agentchart's stop reasons in the conventions' words ('tool_call', not 'toolUse'). */
export function finishReasonOf(stopReason: StopReason): string {
  return stopReason === 'toolUse' ? 'tool_call' : stopReason;
}

function partOf(block: AssistantBlock): Part {
  switch (block.type) {
    case 'text':
      return { type: 'text', content: block.text };
    case 'thinking':
      return { type: 'reasoning', content: block.text };
    case 'toolCall':
      return { type: 'tool_call', id: block.id, name: block.name, arguments: block.arguments };
  }
}

function genAIMessage(message: Message): GenAIMessage | null {
  switch (message.role) {
    case 'user':
      return { role: 'user', parts: [{ type: 'text', content: message.content }] };
    case 'assistant':
      return { role: 'assistant', parts: message.content.map(partOf) };
    case 'toolResult':
      return {
        role: 'tool',
        parts: [{ type: 'tool_call_response', id: message.toolCallId, response: message.content }],
      };
    case 'custom':
      // Application notes reach the model only when they opt in, and then as user text.
      return message.includeInContext ? { role: 'user', parts: [{ type: 'text', content: message.content }] } : null;
  }
}

export function inputMessagesJson(messages: readonly Message[]): string {
  return JSON.stringify(messages.map(genAIMessage).filter((message) => message !== null));
}

export function outputMessagesJson(message: AssistantMessage): string {
  const finishReason = finishReasonOf(message.stopReason);
  return JSON.stringify([{ role: 'assistant', parts: message.content.map(partOf), finish_reason: finishReason }]);
}

export function systemInstructionsJson(systemPrompt: string): string {
  return JSON.stringify([{ type: 'text', content: systemPrompt }]);
}
