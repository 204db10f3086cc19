import { expect } from 'vitest';
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import type { Message } from 'agentchart';
import type { AgentchartUIMessage } from 'agentchart/ai-sdk-ui';

// The AI SDK's own client side, as useChat runs it: the response read by its chat transport (which
// checks every chunk against the protocol's schema), the chunks folded into a UIMessage by
// readUIMessageStream. In the AI SDK 6 suite `ai` is AI SDK 6.

/** The chunks of a response as the client accepts them (a chunk the schema refuses fails here). */
export async function clientChunks(response: Response): Promise<UIMessageChunk[]> {
  const chunks: UIMessageChunk[] = [];
  const reader = (await transportStream(response)).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
  return chunks;
}

/** The assistant message a response leaves on the client; `message`: the one it continues. */
export async function clientMessage(response: Response, message?: AgentchartUIMessage): Promise<AgentchartUIMessage> {
  const stream = await transportStream(response);
  let last: AgentchartUIMessage | undefined;
  const ids = new Set<string>();
  for await (const snapshot of readUIMessageStream<AgentchartUIMessage>({
    stream,
    ...(message ? { message: structuredClone(message) } : {}),
  })) {
    last = snapshot;
    ids.add(snapshot.id);
  }
  if (!last) throw new Error('the response wrote no message');
  // One assistant message per response: every state the client saw is of the same message.
  if (ids.size !== 1 || last.role !== 'assistant') throw new Error(`not one assistant message: ${[...ids]}`);
  return last;
}

async function transportStream(response: Response): Promise<ReadableStream<UIMessageChunk>> {
  const transport = new DefaultChatTransport<UIMessage>({
    api: 'http://127.0.0.1/api/chat',
    fetch: async () => response,
  });
  return transport.sendMessages({
    chatId: 'chat',
    messages: [],
    abortSignal: undefined,
    trigger: 'submit-message',
    messageId: undefined,
  });
}

/** What the user does in the UI: answers the approval request of `approvalId` (addToolApprovalResponse). */
export function answerApproval(
  message: AgentchartUIMessage,
  approvalId: string,
  approved: boolean,
  reason?: string,
): AgentchartUIMessage {
  const parts = message.parts.map((part) =>
    'approval' in part && part.approval?.id === approvalId && part.state === 'approval-requested'
      ? { ...part, state: 'approval-responded' as const, approval: { ...part.approval, approved, reason } }
      : part,
  );
  return { ...message, parts } as AgentchartUIMessage;
}

/** The tool and content parts of a message (data parts aside), for comparison with the run's messages. */
export function contentParts(message: AgentchartUIMessage): AgentchartUIMessage['parts'] {
  return message.parts.filter((part) => !part.type.startsWith('data-'));
}

export function dataParts(message: AgentchartUIMessage, name: string): unknown[] {
  return message.parts.flatMap((part) => (part.type === `data-${name}` ? [(part as { data: unknown }).data] : []));
}

export interface PartsExpectation {
  /** Calls the user or a handler denied (output-denied, with the reason of their `rejected: …` result). */
  denied?: string[];
  /** Calls a handler decided (AI SDK 7 shows them as automatic approvals). */
  automatic?: string[];
  /** Calls the user was asked about: their approval id. */
  asked?: Record<string, string>;
  /** AI SDK 7's approval states (6 has no automatic approvals and no approval response chunk). */
  dialect: 'v6' | 'v7';
}

/**
 * The parts a run's messages should give, built from the messages alone: a step per assistant
 * message, its text and reasoning, one tool part per call with its input and its result.
 */
export function expectedParts(runMessages: readonly Message[], expectation: PartsExpectation): unknown[] {
  const results = new Map(
    runMessages.flatMap((message) => (message.role === 'toolResult' ? [[message.toolCallId, message] as const] : [])),
  );
  return runMessages.flatMap((message) => {
    if (message.role !== 'assistant') return [];
    return [
      { type: 'step-start' },
      ...message.content.map((block) => {
        if (block.type === 'text') return { type: 'text', text: block.text, state: 'done' };
        if (block.type === 'thinking') return { type: 'reasoning', text: block.text, state: 'done' };
        const result = results.get(block.id);
        if (!result) throw new Error(`no result for ${block.id}`);
        const base = { type: `tool-${block.name}`, toolCallId: block.id, input: block.arguments };
        const approval = approvalOf(block.id, result.content, expectation);
        if (expectation.denied?.includes(block.id) && approval) return { ...base, state: 'output-denied', approval };
        if (result.isError) return { ...base, state: 'output-error', errorText: result.content, ...opt(approval) };
        return { ...base, state: 'output-available', output: result.content, ...opt(approval) };
      }),
    ];
  });
}

function approvalOf(toolCallId: string, result: string, expectation: PartsExpectation): object | undefined {
  const denied = expectation.denied?.includes(toolCallId);
  const decision = denied ? { approved: false, reason: result.slice('rejected: '.length) } : { approved: true };
  const asked = expectation.asked?.[toolCallId];
  if (asked) return expectation.dialect === 'v7' || denied ? { id: asked, ...decision } : { id: asked, approved: true };
  if (expectation.dialect === 'v7' && expectation.automatic?.includes(toolCallId)) {
    return { id: `auto-${toolCallId}`, isAutomatic: true, ...decision };
  }
  return undefined;
}

const opt = (approval: object | undefined) => (approval ? { approval } : {});

/** Parts compared field by field (the SDK adds fields of its own, e.g. `providerExecuted: undefined`). */
export function partsLike(expected: unknown[]): unknown[] {
  return expected.map((part) => expect.objectContaining(part as object));
}
