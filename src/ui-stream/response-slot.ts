import { AgentError } from '../domain/errors.js';
import type { UIStreamSdk } from './sdk.js';
import type { AgentchartMessageMetadata, AgentchartUIChunk, AgentchartResponseStatus } from './types.js';

/**
 * One HTTP response of a chat: the chunks a run writes while this response carries it. Its
 * request's signal (the client's stop, a closed page) is the user stopping the run, for as long as
 * the response is open.
 */
export class ResponseSlot {
  readonly stream: ReadableStream<AgentchartUIChunk>;
  private controller!: ReadableStreamDefaultController<AgentchartUIChunk>;
  private open = true;
  private readonly onAbort: () => void;

  constructor(
    private readonly signal: AbortSignal | undefined,
    stop: () => void,
  ) {
    this.stream = new ReadableStream<AgentchartUIChunk>({
      start: (controller) => {
        this.controller = controller;
      },
      // The client went away without a stop (a closed page): the same as a stop.
      cancel: () => {
        if (this.close()) stop();
      },
    });
    this.onAbort = () => {
      if (this.close()) stop();
    };
    signal?.addEventListener('abort', this.onAbort, { once: true });
    if (signal?.aborted) queueMicrotask(this.onAbort);
  }

  get isOpen(): boolean {
    return this.open;
  }

  /** The assistant message this response writes (or continues). */
  begin(messageId: string, runId: string): void {
    const messageMetadata: AgentchartMessageMetadata = { runId, status: 'running' };
    this.write({ type: 'start', messageId, messageMetadata });
  }

  write(chunk: AgentchartUIChunk): void {
    if (this.open) this.controller.enqueue(chunk);
  }

  /** Ends the response before the run ends, saying why (`continued`, `awaitingApproval`). */
  finish(runId: string, status: Exclude<AgentchartResponseStatus, 'running'>): void {
    const finishReason = status === 'awaitingApproval' ? 'tool-calls' : 'other';
    this.write({ type: 'finish', finishReason, messageMetadata: { runId, status } });
    this.end();
  }

  /** Closes the response (a response that wrote nothing leaves no message on the client). */
  end(): void {
    if (!this.close()) return;
    this.controller.close();
  }

  fail(error: unknown): void {
    if (!this.close()) return;
    this.controller.error(error);
  }

  /** `false` when it was closed already. */
  private close(): boolean {
    if (!this.open) return false;
    this.open = false;
    this.signal?.removeEventListener('abort', this.onAbort);
    return true;
  }

  /** The response itself: the chunks as server-sent events, by `ai`'s own `createUIMessageStreamResponse`. */
  response(sdk: UIStreamSdk): Response {
    const source = this.stream;
    const stream = sdk.createUIMessageStream({ execute: ({ writer }) => writer.merge(source), onError: errorText });
    return sdk.createUIMessageStreamResponse({ stream });
  }
}

/** The error chunk's text: the session's refusal as the client may read it; nothing of a failure of ours. */
function errorText(error: unknown): string {
  return error instanceof AgentError ? `${error.code}: ${error.message}` : 'chatHandler failed.';
}
