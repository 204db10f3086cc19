import type { ModelRequest } from 'agentchart';

/**
 * A history with every shape the adapters must convert: system prompt, user text, a hidden and a
 * visible custom message, an assistant turn with thinking, text and two tool calls, an ok and an
 * error tool result, an empty failed assistant message (never sent), and a following user message.
 */
export const HISTORY_REQUEST: ModelRequest = {
  systemPrompt: 'You are terse.',
  messages: [
    { role: 'user', content: 'Weather in Paris and Rome?' },
    { role: 'custom', customType: 'ui-marker', content: 'rendered a spinner', includeInContext: false },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', text: 'Two cities, two calls.' },
        { type: 'text', text: 'Checking both.' },
        { type: 'toolCall', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } },
        { type: 'toolCall', id: 'call_2', name: 'get_weather', arguments: { city: 'Rome' } },
      ],
      stopReason: 'toolUse',
    },
    { role: 'toolResult', toolCallId: 'call_1', toolName: 'get_weather', content: '18°C, sunny', isError: false },
    { role: 'toolResult', toolCallId: 'call_2', toolName: 'get_weather', content: 'upstream timeout', isError: true },
    { role: 'custom', customType: 'reminder', content: 'Answer in one line.', includeInContext: true },
    { role: 'assistant', content: [], stopReason: 'error', errorMessage: 'overloaded' },
    { role: 'user', content: 'Go on.' },
  ],
  tools: [
    {
      name: 'get_weather',
      description: 'Current weather for a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  ],
};

export const WEATHER_PARAMETERS = HISTORY_REQUEST.tools[0]?.parameters;
