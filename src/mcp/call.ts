import type { ToolContext, ToolOutput } from '../tools/types.js';
import type { Link, LinkLoss, McpConnection } from './connection.js';
import { resultToOutput } from './content.js';
import { CANCEL_REASON } from './types.js';
import type { McpSdk } from './sdk.js';

export interface CallPlan {
  /** The tool's name on the server. */
  remoteName: string;
  /** The tool's name in the agent. */
  toolName: string;
  /** The toolset's prefix, for messages. */
  server: string;
  replay: 'never' | 'safe';
  callMs: number;
  totalMs: number;
  maxResultBytes: number;
}

type Failure =
  | { kind: 'connectionLost'; reason: string; readLimitBytes?: number }
  | { kind: 'timeout'; overall: boolean }
  | { kind: 'protocol'; message: string };

/**
 * One tools/call. Progress notifications go out as `ctx.update` in order and are all delivered
 * before the call ends; each one resets the call's timeout (up to `totalMs`). The agent's signal
 * cancels the request (the SDK sends `notifications/cancelled` with CANCEL_REASON). A call whose
 * connection is lost follows its replay rule: 'safe' runs once more on the new connection,
 * 'never' ends with an error result saying it was interrupted and not re-run. A result over
 * `maxResultBytes` (or a message over the stdio read limit) is an error result naming the size.
 */
export async function callMcpTool(
  sdk: McpSdk,
  connection: McpConnection,
  plan: CallPlan,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<ToolOutput> {
  const cancel = new AbortController();
  const onAbort = () => cancel.abort(CANCEL_REASON);
  if (ctx.signal.aborted) return cancelled();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const relay = new ProgressRelay(ctx);
  try {
    for (let attempt = 1; ; attempt++) {
      let link: Link;
      try {
        link = await untilAborted(connection.link(), ctx.signal);
      } catch (error) {
        if (ctx.signal.aborted) return cancelled();
        return { content: `MCP server "${plan.server}" is unavailable: ${messageOf(error)}`, isError: true };
      }
      try {
        const call = link.client.callTool({ name: plan.remoteName, arguments: args }, undefined, {
          signal: cancel.signal,
          onprogress: (progress) => relay.push(progress),
          timeout: plan.callMs,
          resetTimeoutOnProgress: true,
          maxTotalTimeout: plan.totalMs,
        });
        const result = await untilLost(call, link);
        await relay.drained();
        const bytes = jsonBytes(result);
        if (bytes > plan.maxResultBytes) return { content: tooLargeText(plan, bytes), isError: true };
        return resultToOutput(result as Record<string, unknown>);
      } catch (error) {
        await relay.drained();
        if (ctx.signal.aborted) return cancelled();
        const failure = classify(sdk, link, error);
        if (failure.kind === 'timeout') return { content: timeoutText(plan, failure.overall), isError: true };
        if (failure.kind === 'protocol')
          return { content: `MCP error from "${plan.server}": ${failure.message}`, isError: true };
        connection.lost(link, failure.reason);
        // Deterministic: the same call would send the same oversized result again.
        if (failure.readLimitBytes !== undefined)
          return { content: overReadLimitText(plan, failure.readLimitBytes), isError: true };
        if (plan.replay === 'safe' && attempt === 1) continue;
        return {
          content:
            `interrupted: the connection to MCP server "${plan.server}" was lost during the call (${failure.reason}); ` +
            `it was not re-run (replay: '${plan.replay}'${plan.replay === 'safe' ? ', already re-run once' : ''})`,
          isError: true,
        };
      }
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/** Thrown into a call whose link was lost while it waited. */
class LinkLost extends Error {
  constructor(readonly loss: LinkLoss) {
    super(loss.reason);
  }
}

/** The call's answer, or a LinkLost as soon as its link is lost. */
function untilLost<T>(call: Promise<T>, link: Link): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (link.lost) reject(new LinkLost({ reason: 'the connection closed' }));
    const forget = link.onLost((loss) => reject(new LinkLost(loss)));
    call.then(
      (value) => (forget(), resolve(value)),
      (error: unknown) => (forget(), reject(error)),
    );
  });
}

/** The result's size as JSON, in UTF-8 bytes (about what the server sent). */
function jsonBytes(result: unknown): number {
  return new TextEncoder().encode(JSON.stringify(result) ?? '').byteLength;
}

function sizeText(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  return mib >= 0.1 ? `${mib.toFixed(1)} MiB (${bytes} bytes)` : `${bytes} bytes`;
}

function tooLargeText(plan: CallPlan, bytes: number): string {
  return (
    `result too large: MCP tool "${plan.remoteName}" of server "${plan.server}" returned ${sizeText(bytes)}, ` +
    `over its maxResultBytes of ${sizeText(plan.maxResultBytes)}; the result was dropped`
  );
}

function overReadLimitText(plan: CallPlan, readLimitBytes: number): string {
  return (
    `result too large: a message from MCP server "${plan.server}" passed the read limit of ${sizeText(readLimitBytes)} ` +
    `during this call (maxResultBytes is ${sizeText(plan.maxResultBytes)}); the result was dropped and the server reconnected`
  );
}

function timeoutText(plan: CallPlan, overall: boolean): string {
  return overall
    ? `timed out: the call passed its overall limit of ${plan.totalMs} ms`
    : `timed out after ${plan.callMs} ms without a result or a progress notification`;
}

/** The agent has already given the call its aborted result; this one is not used. */
function cancelled(): ToolOutput {
  return { content: CANCEL_REASON, isError: true };
}

/** Serializes progress into awaited `ctx.update` calls; `drained()` waits for the last one. */
class ProgressRelay {
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: ToolContext) {}

  push(progress: { progress: number; total?: number; message?: string }): void {
    const partial = {
      progress: progress.progress,
      ...(progress.total !== undefined ? { total: progress.total } : {}),
      ...(progress.message !== undefined ? { message: progress.message } : {}),
    };
    this.chain = this.chain.then(() => this.ctx.update(partial)).catch(() => {});
  }

  drained(): Promise<void> {
    return this.chain;
  }
}

function classify(sdk: McpSdk, link: Link, error: unknown): Failure {
  if (error instanceof LinkLost) return { kind: 'connectionLost', ...error.loss };
  // The SDK closes the link before failing its pending requests: a lost link is the cause.
  if (link.lost) return { kind: 'connectionLost', reason: 'the connection closed' };
  if (error instanceof sdk.StreamableHTTPError && isExpiredSession(error.code, error.message)) {
    return { kind: 'connectionLost', reason: `the server no longer knows the session (HTTP ${error.code})` };
  }
  if (isNetworkFailure(error))
    return { kind: 'connectionLost', reason: `the server could not be reached (${messageOf(error)})` };
  if (error instanceof sdk.McpError && error.code === sdk.ErrorCode.RequestTimeout) {
    return { kind: 'timeout', overall: /maximum total timeout/i.test(error.message) };
  }
  return { kind: 'protocol', message: messageOf(error) };
}

/** 404, or 400 "no valid session": the server restarted or dropped the session. */
export function isExpiredSession(status: number | undefined, message: string): boolean {
  return status === 404 || (status === 400 && /no valid session/i.test(message));
}

/** fetch's own failure (refused, reset): the request may not have reached the server. */
function isNetworkFailure(error: unknown): boolean {
  return (
    error instanceof TypeError &&
    /fetch failed|network|ECONNREFUSED|ECONNRESET/i.test(`${error.message} ${messageOf(error.cause)}`)
  );
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => (signal.removeEventListener('abort', onAbort), resolve(value)),
      (error: unknown) => (signal.removeEventListener('abort', onAbort), reject(error)),
    );
  });
}

export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
