import type { UIMessage, UIMessageChunk, UIMessageStreamWriter } from 'ai';
import { assertInstalled, lazyPackage, type OptionalPackage } from '../peers/optional-sdk.js';

/** What agentchart/ai-sdk-ui uses of the `ai` package (6 and 7 both have it). */
export interface UIStreamSdk {
  createUIMessageStream(options: {
    execute(options: { writer: UIMessageStreamWriter }): Promise<void> | void;
    onError?: (error: unknown) => string;
  }): ReadableStream<UIMessageChunk>;
  createUIMessageStreamResponse(
    options: ResponseInit & { stream: ReadableStream<UIMessageChunk>; headers?: HeadersInit },
  ): Response;
  readUIMessageStream<M extends UIMessage>(options: {
    stream: ReadableStream<UIMessageChunk>;
    message?: M;
  }): AsyncIterable<M>;
  /** The protocol's additions in AI SDK 7 (the same `v1` stream): approval responses, automatic approvals. */
  dialect: UIStreamDialect;
}

/**
 * AI SDK 6 and 7 speak the same UI message stream (`x-vercel-ai-ui-message-stream: v1`); 7 added
 * chunks that a 6 client refuses (its chunk schema has no `tool-approval-response`), so they are
 * written only when the server's `ai` is 7.
 */
export interface UIStreamDialect {
  /** `tool-approval-response` chunks and automatic (`isAutomatic`) approval requests. */
  approvalResponses: boolean;
}

export const AI_PACKAGE: OptionalPackage = { name: 'ai', range: '^6 || ^7', neededBy: 'agentchart/ai-sdk-ui' };

export const loadUIStreamSdk = lazyPackage(AI_PACKAGE, async (): Promise<UIStreamSdk> => {
  const ai = await import('ai');
  return {
    createUIMessageStream: ai.createUIMessageStream as UIStreamSdk['createUIMessageStream'],
    createUIMessageStreamResponse: ai.createUIMessageStreamResponse as UIStreamSdk['createUIMessageStreamResponse'],
    readUIMessageStream: ai.readUIMessageStream as UIStreamSdk['readUIMessageStream'],
    // AI SDK 7 is the first with UI-side helpers for tool errors, and with approval responses in the stream.
    dialect: { approvalResponses: 'isToolOutputErrorUIPart' in ai },
  };
});

/** `MissingDependency` now, where the bridge is created, when `ai` is not installed. */
export function assertUIStreamSdk(): void {
  assertInstalled(AI_PACKAGE);
}
