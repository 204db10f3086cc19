import type { AgentRun } from '../runtime/agent.js';
import { parseApprovalId } from './approval-id.js';
import { RunFeed, type ApprovalSource } from './run-feed.js';
import { assertUIStreamSdk, loadUIStreamSdk, type UIStreamSdk } from './sdk.js';
import type { AgentchartMessageMetadata, AgentchartUIChunk } from './types.js';

export interface ToUIMessageStreamOptions {
  /** The assistant message's id (the `start` chunk's `messageId`); the run's id by default. */
  messageId?: string;
  /**
   * The run's agent. With it, a durable approval (a store and no approval handler) is sent as an
   * approval request whose id carries the version `resolveApproval` checks, and the stream ends
   * (`status: 'awaitingApproval'`) once every approval the run waits for is on the client's
   * screen, instead of staying open while the user decides.
   */
  agent?: ApprovalSource;
  /**
   * The approvals the client answered (their `approval.id`s), when this stream continues the
   * client's assistant message after them: what the client shows already is not sent again. Pass
   * the message's id as `messageId`, and answer the approvals (`resolveApproval`) first.
   */
  continuesAfter?: string | readonly string[];
}

/** `Response` options of `toUIMessageStreamResponse` (headers are added to the protocol's own). */
export interface UIMessageStreamResponseInit {
  status?: number;
  statusText?: string;
  headers?: HeadersInit;
}

/**
 * The run as an AI SDK UI message stream, made by `ai`'s own `createUIMessageStream`: one assistant
 * message, a step per turn, text and reasoning as they stream, a tool part per call with its input
 * and its output or error, approvals, progress and steering receipts as data parts, the run's end
 * in the finish chunk's metadata. Cancelling the stream stops reading the run; it does not abort it.
 * Throws `AgentError('MissingDependency')` when `ai` is not installed.
 */
export function toUIMessageStream(
  run: AgentRun,
  options: ToUIMessageStreamOptions = {},
): ReadableStream<AgentchartUIChunk> {
  assertUIStreamSdk();
  return deferredStream(async () => runStream(await loadUIStreamSdk(), run, options));
}

/** `toUIMessageStream` as a `Response` (server-sent events with the protocol's headers), by `ai`'s `createUIMessageStreamResponse`. */
export async function toUIMessageStreamResponse(
  run: AgentRun,
  init: UIMessageStreamResponseInit & ToUIMessageStreamOptions = {},
): Promise<Response> {
  assertUIStreamSdk();
  const sdk = await loadUIStreamSdk();
  const { status, statusText, headers, ...options } = init;
  const response = {
    ...(status ? { status } : {}),
    ...(statusText ? { statusText } : {}),
    ...(headers ? { headers } : {}),
  };
  return sdk.createUIMessageStreamResponse({ ...response, stream: runStream(sdk, run, options) });
}

/** A `start`, the run's chunks, and the end: the run's finish, or the wait for an approval. */
export function runStream(
  sdk: UIStreamSdk,
  run: AgentRun,
  options: ToUIMessageStreamOptions,
): ReadableStream<AgentchartUIChunk> {
  let feed: RunFeed | null = null;
  const source = new ReadableStream<AgentchartUIChunk>({
    start(controller) {
      const metadata: AgentchartMessageMetadata = { runId: run.runId, status: 'running' };
      controller.enqueue({ type: 'start', messageId: options.messageId ?? run.runId, messageMetadata: metadata });
      const close = () => {
        feed?.stop();
        controller.close();
      };
      const answered = [options.continuesAfter ?? []].flat().flatMap((id) => parseApprovalId(id) ?? []);
      feed = new RunFeed(
        sdk.dialect,
        options.agent,
        {
          parked: (runId) => {
            controller.enqueue(awaitingApproval(runId));
            close();
          },
          ended: close,
          failed: (error) => controller.error(error),
        },
        answered,
      ).start(run, (chunk) => controller.enqueue(chunk));
    },
    cancel() {
      feed?.stop();
    },
  });
  return sdk.createUIMessageStream({
    execute: ({ writer }) => writer.merge(source),
  }) as ReadableStream<AgentchartUIChunk>;
}

/** The finish of a response that ends while the run waits for the user's approval. */
export function awaitingApproval(runId: string): AgentchartUIChunk {
  return { type: 'finish', finishReason: 'tool-calls', messageMetadata: { runId, status: 'awaitingApproval' } };
}

/** A stream available now whose source is made once `ai` has loaded (a load failure errors the stream). */
function deferredStream<T>(make: () => Promise<ReadableStream<T>>): ReadableStream<T> {
  let reader: ReadableStreamDefaultReader<T> | null = null;
  const ready = make().then((stream) => (reader = stream.getReader()));
  ready.catch(() => {}); // reported by the first read; a stream never read must not reject unhandled
  return new ReadableStream<T>({
    async pull(controller) {
      const source = reader ?? (await ready);
      const { done, value } = await source.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel(reason) {
      await ready.then((source) => source.cancel(reason)).catch(() => {});
    },
  });
}
