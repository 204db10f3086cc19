import type { AgentEvent } from '../../domain/events.js';
import { toolCallsOf, type AssistantMessage } from '../../domain/messages.js';
import type { ScriptEntry } from '../scripted-model.js';
import type { ExploreResult, Step, Violation } from './types.js';

/**
 * The readable form of a counterexample: what happened step by step, the event log in one line
 * per event, and the string that replays the path. Deterministic (no times, no run ids), so a
 * README can show it exactly as it prints.
 */

export function describeStep(step: Step, replies: ReadonlyMap<string, ScriptEntry>): string {
  switch (step.kind) {
    case 'reply':
      return `model call ${step.modelCall} answers "${step.reply}"${summarizeEntry(replies.get(step.reply))}`;
    case 'modelError':
      return `model call ${step.modelCall} fails (injected network error)`;
    case 'tool':
      return step.outcome === 'ok'
        ? `${step.toolName} (${step.toolCallId}) finishes`
        : `${step.toolName} (${step.toolCallId}) fails (injected error)`;
    case 'approval': {
      const value = step.value;
      const detail = value.approved ? ('arguments' in value ? ` with ${json(value.arguments)}` : '') : '';
      return `the approval of ${step.toolName} (${step.toolCallId}) is answered "${step.decision}"${detail}`;
    }
    case 'clock':
      return `the clock reaches ${step.toMs} ms`;
    case 'steer':
      return `the user steers "${step.text}" ${step.during}`;
    case 'followUp':
      return `the user sends the follow-up "${step.text}" ${step.during}`;
    case 'abort':
      return `the user aborts ${step.during}`;
    case 'crash':
      return `the process crashes ${step.during}; a new process resumes the session`;
  }
}

function summarizeEntry(entry: ScriptEntry | undefined): string {
  if (!entry) return '';
  const parts: string[] = [];
  if (entry.text) parts.push(`text ${quote(entry.text)}`);
  for (const call of entry.toolCalls ?? [])
    parts.push(`calls ${call.name} ${call.rawArguments ?? json(call.arguments ?? {})}`);
  if (entry.error) parts.push(`error ${entry.error.kind}`);
  if (entry.stopReason === 'length') parts.push('cut (length)');
  return parts.length > 0 ? `: ${parts.join(', ')}` : '';
}

/** One line per event (message deltas left out), e.g. `toolExecutionEnd deploy call_0_0 error "rejected…"`. */
export function describeLog(log: readonly AgentEvent[]): string[] {
  return log.filter((event) => event.type !== 'messageUpdate' && event.type !== 'messageStart').map(describeEvent);
}

function describeEvent(event: AgentEvent): string {
  const turn = event.turnIndex !== undefined ? `[${event.turnIndex}] ` : '';
  const line = (detail: string) => `${turn}${event.type}${detail ? ` ${detail}` : ''}`;
  switch (event.type) {
    case 'turnStart':
      return line(event.steeringDelivered ? `(${event.steeringDelivered} steering)` : '');
    case 'beforeModelCall': {
      const last = event.messages.at(-1);
      return line(
        `${event.model}, ${event.messages.length} messages${last ? `, last: ${describeMessageBrief(last)}` : ''}`,
      );
    }
    case 'messageEnd':
      return line(describeAssistant(event.message) + (event.error ? ` (error ${event.error.kind})` : ''));
    case 'toolApprovalRequested':
      return line(`${event.toolName} ${event.toolCallId} ${json(event.arguments)}`);
    case 'toolApprovalResolved':
      return line(`${event.toolName} ${event.toolCallId} ${event.approved ? 'approved' : 'denied'}`);
    case 'toolExecutionStart':
      return line(`${event.toolName} ${event.toolCallId} ${json(event.arguments)}`);
    case 'toolExecutionUpdate':
      return line(`${event.toolName} ${event.toolCallId} ${json(event.partial)}`);
    case 'toolExecutionEnd':
      return line(`${event.toolName} ${event.toolCallId}${event.isError ? ' error' : ''} ${quote(event.result)}`);
    case 'turnEnd':
      return line(event.reason);
    case 'retry':
      return line(`attempt ${event.attempt} in ${event.delayMs} ms after ${event.error.kind}`);
    case 'modelFallback':
      return line(`${event.from} → ${event.to}`);
    case 'policyError':
      return line(`${event.slot}: ${quote(event.message)}`);
    case 'agentEnd':
      return line(
        `${event.status}/${event.endReason}${event.error ? ` (${event.error.code}: ${quote(event.error.message)})` : ''}`,
      );
    default:
      return line('');
  }
}

function describeAssistant(message: AssistantMessage): string {
  const parts: string[] = [];
  for (const block of message.content) {
    if (block.type === 'text') parts.push(`text ${quote(block.text)}`);
    if (block.type === 'toolCall') parts.push(`${block.name} ${block.id} ${json(block.arguments)}`);
  }
  return `${message.stopReason}${parts.length > 0 ? `: ${parts.join(', ')}` : ''}`;
}

function describeMessageBrief(message: { role: string; content?: unknown }): string {
  if (message.role === 'assistant') {
    const calls = toolCallsOf(message as AssistantMessage).length;
    return calls > 0 ? `assistant (${calls} tool calls)` : 'assistant';
  }
  if (message.role === 'toolResult') return `toolResult ${quote(String((message as { content: string }).content))}`;
  return `${message.role} ${typeof message.content === 'string' ? quote(message.content) : ''}`.trim();
}

/** The whole report of a violation: problems, steps, log and how to replay it. */
export function describeViolation(violation: Violation, replies: ReadonlyMap<string, ScriptEntry>): string {
  return [
    ...violation.problems.map((problem) => `  ✗ ${problem}`),
    'path:',
    ...violation.path.map((step, index) => `  ${index + 1}. ${describeStep(step, replies)}`),
    'log:',
    ...describeLog(violation.log).map((line) => `  ${line}`),
    `replay: { path: '${violation.replay}' }`,
  ].join('\n');
}

/** The message assertAgent throws: the counts, then the simplest counterexample. */
export function describeFailure(result: ExploreResult, replies: ReadonlyMap<string, ScriptEntry>): string {
  const simplest = result.violations[0];
  if (!simplest) {
    return (
      `assertAgent: the exploration stopped at maxPaths (${result.paths} paths, ${result.states} states) before its bound was ` +
      'exhausted: raise maxPaths or tighten the bounds (replies, maxTurns, maxInterruptions, interruptions).'
    );
  }
  const head =
    `assertAgent: ${result.violating} of ${result.paths} paths break the invariants or the property ` +
    `(${result.states} states explored). The simplest counterexample (fewest interruptions, then fewest steps), ` +
    `${simplest.path.length} steps:`;
  return `${head}\n${describeViolation(simplest, replies)}`;
}

function quote(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, ' ');
  return JSON.stringify(flat.length > max ? `${flat.slice(0, max - 1)}…` : flat);
}

function json(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
