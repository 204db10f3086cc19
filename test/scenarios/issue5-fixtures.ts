import { expect } from 'vitest';
import type { SimulatedClock } from 'xstate';
import { z } from 'zod';
import {
  defineTool,
  type AgentEvent,
  type AgentEventOf,
  type AgentEventType,
  type AssistantMessage,
  type Message,
  type ToolResultMessage,
  type Usage,
} from 'agentchart';
import type { ScriptedModel } from 'agentchart/testing';
import { settle } from '../support/harness.js';

/** Shared pieces of the retry, fallback, overflow, max-turns and report-mode scenarios (R1–R13). */

export const TEXT_TURN = ['turnStart', 'beforeModelCall', 'messageStart', 'messageUpdate+', 'messageEnd', 'turnEnd'];
export const TOOL_TURN = [
  'turnStart',
  'beforeModelCall',
  'messageStart',
  'messageUpdate+',
  'messageEnd',
  'toolExecutionStart',
  'toolExecutionEnd',
  'turnEnd',
];

/** The report-mode guidance after a reply that called no tool (the model sees it, so it is observable). */
export const GUIDANCE =
  'Your last reply called no tool, so it did not count. Report mode: continue the task with the tools available, ' +
  'and end by calling the report tool "report" with valid arguments.';

export const user = (content: string): Message => ({ role: 'user', content });

export function said(text: string, options: { model?: string; usage?: Usage } = {}): AssistantMessage {
  return {
    role: 'assistant',
    content: [{ type: 'text', text }],
    stopReason: 'stop',
    model: options.model ?? 'scripted',
    ...(options.usage ? { usage: options.usage } : {}),
  };
}

export function called(
  calls: Array<{ id: string; name: string; arguments: Record<string, unknown> }>,
  options: { model?: string; text?: string } = {},
): AssistantMessage {
  return {
    role: 'assistant',
    content: [
      ...(options.text ? [{ type: 'text' as const, text: options.text }] : []),
      ...calls.map((call) => ({ type: 'toolCall' as const, ...call })),
    ],
    stopReason: 'toolUse',
    model: options.model ?? 'scripted',
  };
}

export const result = (toolCallId: string, toolName: string, content: string, isError = false): ToolResultMessage => ({
  role: 'toolResult',
  toolCallId,
  toolName,
  content,
  isError,
});

export const searchTool = (execute: (args: { q: string }) => string | Promise<string> = ({ q }) => `found ${q}`) =>
  defineTool({ name: 'search', description: 'Searches the notes', parameters: z.object({ q: z.string() }), execute });

export const reportTool = () =>
  defineTool({
    name: 'report',
    description: 'Submits the final report',
    parameters: z.object({ summary: z.string() }),
    execute: () => 'report accepted',
  });

export function ofType<T extends AgentEventType>(events: readonly AgentEvent[], type: T): AgentEventOf<T>[] {
  return events.filter((event): event is AgentEventOf<T> => event.type === type);
}

/** The events of one type without their run stamp (runId, seq), for exact comparisons. */
export function bodies<T extends AgentEventType>(
  events: readonly AgentEvent[],
  type: T,
): Array<Omit<AgentEventOf<T>, 'runId' | 'seq'>> {
  return ofType(events, type).map((event) => {
    const { runId: _runId, seq: _seq, ...body } = event;
    return body;
  });
}

/** The model named in each beforeModelCall, in order. */
export const modelsCalled = (events: readonly AgentEvent[]) =>
  ofType(events, 'beforeModelCall').map((event) => event.model);

/** Advances the simulated clock and lets the work it released settle. */
export async function advance(clock: SimulatedClock, ms: number): Promise<void> {
  clock.increment(ms);
  await settle();
}

/**
 * R4: no model is called more than `turns × maxAttempts` times. With unlimited maxTurns, `turns` is
 * the number of turns that ran. The bound is per model: each fallback model has its own attempts.
 */
export function expectCallBound(models: readonly ScriptedModel[], turns: number, maxAttempts: number): void {
  for (const model of models) {
    expect(model.calls, `${model.name} was called ${model.calls} times`).toBeLessThanOrEqual(turns * maxAttempts);
    expect(model.overruns).toEqual([]);
  }
}
