import type {
  LanguageModelV4,
  LanguageModelV4Content,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import {
  scriptedCallId,
  threePieces,
  turnsReplies,
  type ArgumentsKind,
  type ReplyScript,
  type WorkDone,
} from './workload.js';

/**
 * The Vercel AI SDK (`ai` 7) on the benchmark workload, with the tool loop
 * (`stopWhen: stepCountIs(turns + 2)`, so the session ends on the text answer, not on the limit),
 * the `noop` tool with the same zod schema as agentchart's (the SDK validates the input with it on
 * every call), default unlimited tool-call concurrency, and a hand-written LanguageModelV4 that
 * replays the script instantly. `stream`: `streamText`, drained with `consumeStream()` — the path
 * equivalent to agentchart's, which always streams; `generate`: `generateText` (`doGenerate`, no
 * streaming), measured to show what the SDK's streaming costs.
 */
export type AiSdkPath = 'stream' | 'generate';

const USAGE: LanguageModelV4Usage = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

const tools = {
  noop: tool({
    description: 'Returns at once.',
    inputSchema: z.object({ i: z.number() }),
    execute: () => 'ok',
  }),
};

const overrun = (index: number) => new Error(`ai-sdk scripted model: call #${index} is beyond the script`);

/**
 * The script as a LanguageModelV4. `doStream` returns a stream with every part enqueued when it
 * starts (no timers), in the order an AI SDK provider emits them: `stream-start`; the text as
 * `text-start`, one `text-delta` per delta, `text-end`; per tool call `tool-input-start`, the JSON
 * input in three `tool-input-delta`s, `tool-input-end` and the `tool-call` with the input text;
 * then `finish`. `doGenerate` returns the same content at once.
 */
export function scriptedLanguageModel(script: ReplyScript): LanguageModelV4 {
  let callIndex = 0;
  const finishReason = (calls: number) => ({ unified: calls > 0 ? 'tool-calls' : 'stop', raw: undefined }) as const;
  return {
    specificationVersion: 'v4',
    provider: 'scripted',
    modelId: 'scripted',
    supportedUrls: {},
    doGenerate() {
      const index = callIndex++;
      const reply = script(index);
      if (!reply) return Promise.reject(overrun(index));
      const content: LanguageModelV4Content[] = [
        ...(reply.text.length > 0 ? [{ type: 'text' as const, text: reply.text.join('') }] : []),
        ...reply.toolCalls.map((call, i): LanguageModelV4Content => ({
          type: 'tool-call',
          toolCallId: scriptedCallId(index, i),
          toolName: call.name,
          input: JSON.stringify(call.arguments),
        })),
      ];
      return Promise.resolve({
        content,
        finishReason: finishReason(reply.toolCalls.length),
        usage: USAGE,
        warnings: [],
      });
    },
    doStream() {
      const index = callIndex++;
      const reply = script(index);
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (!reply) {
        parts.push({ type: 'error', error: overrun(index) });
      } else {
        if (reply.text.length > 0) {
          const id = `text_${index}`;
          parts.push({ type: 'text-start', id });
          for (const delta of reply.text) parts.push({ type: 'text-delta', id, delta });
          parts.push({ type: 'text-end', id });
        }
        reply.toolCalls.forEach((call, i) => {
          const id = scriptedCallId(index, i);
          const input = JSON.stringify(call.arguments);
          parts.push({ type: 'tool-input-start', id, toolName: call.name });
          for (const delta of threePieces(input)) parts.push({ type: 'tool-input-delta', id, delta });
          parts.push({ type: 'tool-input-end', id }, { type: 'tool-call', toolCallId: id, toolName: call.name, input });
        });
        parts.push({ type: 'finish', usage: USAGE, finishReason: finishReason(reply.toolCalls.length) });
      }
      const stream = new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      });
      return Promise.resolve({ stream });
    },
  };
}

/** The call options of a session of `turns` tool turns then an answer: the noop tool, a step limit past the answer. */
export function aiSdkOptions(model: LanguageModelV4, turns: number) {
  return { model, tools, prompt: 'go', stopWhen: stepCountIs(turns + 2) };
}

/** Turns = steps; tool calls executed = tool results (the SDK's own record of the session). */
export function aiSdkWorkDone(steps: readonly { toolResults: readonly unknown[] }[], finishReason: string): WorkDone {
  let toolCallsExecuted = 0;
  for (const step of steps) toolCallsExecuted += step.toolResults.length;
  return {
    status: finishReason === 'stop' ? 'completed' : `finishReason ${finishReason}`,
    turns: steps.length,
    toolCallsExecuted,
  };
}

/** Builds the model (untimed) and returns the timed part: one session, then the work read back from its steps. */
export function prepareAiSdk(
  path: AiSdkPath,
  turns: number,
  calls: number,
  kind: ArgumentsKind = 'valid',
): () => Promise<WorkDone> {
  const model = scriptedLanguageModel(turnsReplies(turns, calls, kind));
  const options = aiSdkOptions(model, turns);
  if (path === 'generate') {
    return async () => {
      const result = await generateText(options);
      return aiSdkWorkDone(result.steps, result.finishReason);
    };
  }
  return async () => {
    const result = streamText(options);
    await result.consumeStream();
    return aiSdkWorkDone(await result.steps, await result.finishReason);
  };
}
