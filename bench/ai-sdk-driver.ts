import type {
  LanguageModelV4,
  LanguageModelV4Content,
  LanguageModelV4StreamPart,
  LanguageModelV4Usage,
} from '@ai-sdk/provider';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import {
  FINAL_ANSWER,
  scriptedCallId,
  threePieces,
  turnsScript,
  type ArgumentsKind,
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
 * starts (no timers), in the order an AI SDK provider emits them: `stream-start`; per tool call
 * `tool-input-start`, the JSON input in three `tool-input-delta`s, `tool-input-end` and the
 * `tool-call` with the input text; or `text-start`, text deltas, `text-end`; then `finish`.
 * `doGenerate` returns the same content at once.
 */
export function scriptedLanguageModel(turns: number, calls: number, kind: ArgumentsKind = 'valid'): LanguageModelV4 {
  const script = turnsScript(turns, calls, kind);
  let callIndex = 0;
  return {
    specificationVersion: 'v4',
    provider: 'scripted',
    modelId: 'scripted',
    supportedUrls: {},
    doGenerate() {
      const index = callIndex++;
      const entry = script(index);
      if (!entry) return Promise.reject(overrun(index));
      const toolCalls = entry.toolCalls ?? [];
      const content: LanguageModelV4Content[] =
        toolCalls.length > 0
          ? toolCalls.map((call, i) => ({
              type: 'tool-call',
              toolCallId: scriptedCallId(index, i),
              toolName: call.name,
              input: JSON.stringify(call.arguments ?? {}),
            }))
          : [{ type: 'text', text: entry.text ?? FINAL_ANSWER.text ?? '' }];
      const finishReason = { unified: toolCalls.length > 0 ? 'tool-calls' : 'stop', raw: undefined } as const;
      return Promise.resolve({ content, finishReason, usage: USAGE, warnings: [] });
    },
    doStream() {
      const index = callIndex++;
      const entry = script(index);
      const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
      if (!entry) {
        parts.push({ type: 'error', error: overrun(index) });
      } else if (entry.toolCalls?.length) {
        entry.toolCalls.forEach((call, i) => {
          const id = scriptedCallId(index, i);
          const input = JSON.stringify(call.arguments ?? {});
          parts.push({ type: 'tool-input-start', id, toolName: call.name });
          for (const delta of threePieces(input)) parts.push({ type: 'tool-input-delta', id, delta });
          parts.push({ type: 'tool-input-end', id }, { type: 'tool-call', toolCallId: id, toolName: call.name, input });
        });
        parts.push({ type: 'finish', usage: USAGE, finishReason: { unified: 'tool-calls', raw: undefined } });
      } else {
        const id = `text_${index}`;
        parts.push({ type: 'text-start', id });
        for (const delta of threePieces(entry.text ?? FINAL_ANSWER.text ?? ''))
          parts.push({ type: 'text-delta', id, delta });
        parts.push(
          { type: 'text-end', id },
          { type: 'finish', usage: USAGE, finishReason: { unified: 'stop', raw: undefined } },
        );
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

/** Builds the model (untimed) and returns the timed part: one session, then the work read back from its steps. */
export function prepareAiSdk(
  path: AiSdkPath,
  turns: number,
  calls: number,
  kind: ArgumentsKind = 'valid',
): () => Promise<WorkDone> {
  const model = scriptedLanguageModel(turns, calls, kind);
  const options = { model, tools, prompt: 'go', stopWhen: stepCountIs(turns + 2) };
  const workDone = (steps: readonly { toolResults: readonly unknown[] }[], finishReason: string): WorkDone => {
    let toolCallsExecuted = 0;
    for (const step of steps) toolCallsExecuted += step.toolResults.length;
    return {
      status: finishReason === 'stop' ? 'completed' : `finishReason ${finishReason}`,
      turns: steps.length,
      toolCallsExecuted,
    };
  };
  if (path === 'generate') {
    return async () => {
      const result = await generateText(options);
      return workDone(result.steps, result.finishReason);
    };
  }
  return async () => {
    const result = streamText(options);
    await result.consumeStream();
    return workDone(await result.steps, await result.finishReason);
  };
}
