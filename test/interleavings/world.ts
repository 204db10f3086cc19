import type { TaskScheduler } from './scripted-scheduler.js';
import { z } from 'zod';
import { defineTool, type ApprovalDecision, type ApprovalHandler, type Model, type ModelStreamEvent } from 'agentchart';
import { scriptedModel, type ScriptEntry } from 'agentchart/testing';
import type { ApprovalSpec, CallSpec, ReplySpec, ToolArgs } from './spec.js';

/**
 * The world a scenario runs in: a model, tools and an approval handler whose every wait is a task
 * of fast-check's scheduler, so the scheduler alone decides the order in which replies, tool
 * completions, progress updates and approval decisions reach the real actors.
 */

/** Waits for the scheduler to release `label`; rejects early when `signal` aborts (a tool that honors it). */
export type Gate = (label: string, signal?: AbortSignal) => Promise<void>;

export function gateOn(scheduler: TaskScheduler, onRelease: () => void): Gate {
  return (label, signal) => {
    const released = scheduler.schedule(Promise.resolve(), label);
    // Attached first, so the count is up to date before any continuation of this task runs.
    void released.then(onRelease);
    if (!signal) return released;
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(new Error(`${label}: aborted by the signal`));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      void released.then(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  };
}

export { NEVER_MS, TrackedClock } from '../../src/testing/tracked-clock.js';

/** What the world saw happen, compared with the counters and the history after the run. */
export interface WorldRecord {
  /** Every model request's messages (copied), in call order, across models. */
  requests: Array<{ model: string; messages: unknown[] }>;
  /** Tool executions that really began, by call id. */
  executions: string[];
  /** Approval handler invocations, by call id. */
  approvalCalls: string[];
  /** Streams in progress whose reply is a stall: only an abort ends them. */
  stalledStreams: number;
  /** A provider reported `aborted` by itself (no agent.abort()). */
  providerAborted: boolean;
  /** Every call the runtime made into the world (model, tool, approval, policy), with its moment. */
  invocations: Array<{ what: string; moment: number }>;
  /** The next moment of the driver's counter, which also orders events and aborts. */
  stamp: () => number;
}

export function invoked(record: WorldRecord, what: string): void {
  record.invocations.push({ what, moment: record.stamp() });
}

const TOOL_PARAMETERS = z.object({
  outcome: z.enum(['ok', 'fail', 'throw']),
  updates: z.number().int().min(0).max(3),
  honorsSignal: z.boolean(),
});

function toolBody(name: string, gate: Gate, record: WorldRecord) {
  return async (
    args: ToolArgs,
    ctx: { toolCallId: string; signal: AbortSignal; update(partial: unknown): Promise<void> },
  ) => {
    record.executions.push(ctx.toolCallId);
    invoked(record, `tool ${ctx.toolCallId}`);
    const signal = args.honorsSignal ? ctx.signal : undefined;
    for (let step = 0; step < args.updates; step++) {
      await gate(`tool ${ctx.toolCallId} progress ${step}`, signal);
      await ctx.update({ step });
    }
    await gate(`tool ${ctx.toolCallId} finishes (${args.outcome})`, signal);
    if (args.outcome === 'throw') throw new Error(`${name} ${ctx.toolCallId} threw`);
    if (args.outcome === 'fail') return { content: `${name} ${ctx.toolCallId} failed`, isError: true };
    return `${name} ${ctx.toolCallId} done`;
  };
}

/** `work` runs freely; `guarded` asks for approval in 'smart' mode. Both wait on the scheduler. */
export function worldTools(gate: Gate, record: WorldRecord) {
  const work = defineTool({
    name: 'work',
    description: 'does some work',
    parameters: TOOL_PARAMETERS,
    execute: toolBody('work', gate, record),
  });
  const guarded = defineTool({
    name: 'guarded',
    description: 'does sensitive work',
    parameters: TOOL_PARAMETERS,
    requiresApproval: true,
    execute: toolBody('guarded', gate, record),
  });
  return [work, guarded];
}

function toolCallOf(spec: CallSpec, id: string) {
  switch (spec.kind) {
    case 'run':
      return { id, name: spec.tool, arguments: { ...spec.args } };
    case 'unknown':
      return { id, name: 'ghost', arguments: {} };
    case 'invalid':
      return { id, name: 'work', arguments: { outcome: 42 } };
    case 'malformed':
      return { id, name: 'work', rawArguments: '{"outcome": "ok", ' };
  }
}

const USAGE = { input: 3, output: 2 };

/** The scripted entry of one reply; tool call ids are unique across the whole scenario. */
export function entryOf(reply: ReplySpec, callIndex: number): ScriptEntry {
  const toolCalls = reply.calls.map((spec, index) => toolCallOf(spec, `c${callIndex}_${index}`));
  const text = reply.text ? `reply ${callIndex}` : undefined;
  const content = { ...(text ? { text } : {}), ...(toolCalls.length > 0 ? { toolCalls } : {}), usage: USAGE };
  switch (reply.end.kind) {
    case 'done':
      return content.text || toolCalls.length > 0 ? content : { text: `reply ${callIndex}`, usage: USAGE };
    case 'length':
      return { ...content, stopReason: 'length' };
    case 'error':
      return {
        ...content,
        error: {
          kind: reply.end.error,
          ...(reply.end.retryAfterMs !== undefined ? { retryAfterMs: reply.end.retryAfterMs } : {}),
        },
      };
    case 'stall':
      return { ...content, stall: true };
  }
}

/** The final text every call beyond the scenario's replies gets, so every run can end naturally. */
const FINAL: ReplySpec = { text: true, calls: [], end: { kind: 'done' } };

/**
 * The primary and fallback models share one script: model call k (counted across both) plays
 * reply k. The stream waits for the scheduler before its first event and before its terminal one.
 */
export function worldModels(
  names: readonly string[],
  replies: readonly ReplySpec[],
  gate: Gate,
  record: WorldRecord,
): Model[] {
  let callIndex = 0;
  return names.map((name) => {
    const inner = scriptedModel(() => entryOf(replies[callIndex] ?? FINAL, callIndex), { name, recordRequests: false });
    return {
      name,
      stream(request, options) {
        const index = callIndex;
        const reply = replies[index] ?? FINAL;
        record.requests.push({ model: name, messages: structuredClone(request.messages) });
        invoked(record, `model call ${index} (${name})`);
        const source = inner.stream(request, options);
        callIndex++;
        return gatedStream(
          source,
          gate,
          `model call ${index} (${name})`,
          reply.end.kind === 'stall',
          options.signal,
          record,
        );
      },
    } satisfies Model;
  });
}

async function* gatedStream(
  source: AsyncIterable<ModelStreamEvent>,
  gate: Gate,
  label: string,
  stalls: boolean,
  signal: AbortSignal,
  record: WorldRecord,
): AsyncGenerator<ModelStreamEvent> {
  if (stalls) record.stalledStreams++;
  try {
    await gate(`${label} first event`);
    for await (const event of source) {
      if (event.type === 'done' || event.type === 'error') {
        if (event.type === 'error' && event.error.kind === 'aborted' && !signal.aborted) record.providerAborted = true;
        await gate(`${label} ${event.type === 'done' ? 'done' : `error ${event.error.kind}`}`);
      }
      yield event;
    }
  } finally {
    if (stalls) record.stalledStreams--;
  }
}

/** The k-th approval request gets approvals[k] (approve once they run out). */
export function worldApproval(approvals: readonly ApprovalSpec[], gate: Gate, record: WorldRecord): ApprovalHandler {
  return (request, { signal }) => {
    const spec = approvals[record.approvalCalls.length] ?? { kind: 'approve', honorsSignal: false };
    record.approvalCalls.push(request.toolCallId);
    invoked(record, `approval handler for ${request.toolCallId}`);
    if (spec.kind === 'throwSync') throw new Error(`approval handler for ${request.toolCallId} threw`);
    const waited = gate(`approval ${request.toolCallId} → ${spec.kind}`, spec.honorsSignal ? signal : undefined);
    return waited.then((): ApprovalDecision => {
      switch (spec.kind) {
        case 'approve':
          return { approved: true };
        case 'deny':
          return { approved: false, reason: 'not now' };
        case 'approveWith':
          return { approved: true, arguments: { ...spec.args } };
        case 'reject':
          throw new Error(`approval for ${request.toolCallId} rejected`);
        case 'invalid':
          return { approved: 'yes' } as unknown as ApprovalDecision;
      }
    });
  };
}
