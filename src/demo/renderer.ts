import type { AgentEvent, AgentEventOf, Counters, RunResult } from '../index.js';
import { isDemoProgress } from './tools.js';

export interface RendererOptions {
  write: (text: string) => void;
  /** A terminal: colors, and a tool's consecutive progress lines overwrite each other. */
  tty: boolean;
}

const COUNTER_ORDER: readonly (keyof Counters)[] = [
  'turns',
  'turnsFailed',
  'modelCalls',
  'retries',
  'modelFallbacks',
  'overflowRecoveries',
  'toolCallsRequested',
  'toolCallsExecuted',
  'toolCallsFailed',
  'toolCallsRejected',
  'toolCallsInvalid',
  'steeringDelivered',
  'followUpsDelivered',
  'approvalsRequested',
  'approvalsDenied',
  'tokensIn',
  'tokensOut',
  'tokensCacheRead',
  'tokensCacheWrite',
  'costUsd',
  'backoffMs',
  'failureCodes',
];

const ONE_LINE_MAX = 96;

/** Prints an agent's lifecycle as it happens: one line per event, indented inside a turn. */
export class TerminalRenderer {
  private turnOpen = false;
  /** The tool call whose progress line was printed last (a TTY overwrites it with the next one). */
  private lastProgressCall: string | null = null;

  constructor(private readonly options: RendererOptions) {}

  /** A line the demo itself says (the "user" steering, the approval handler), inside the open turn. */
  say(text: string, style: 'user' | 'note' = 'note'): void {
    this.line(this.turnOpen ? 1 : 0, style === 'user' ? this.paint('36', text) : text);
  }

  heading(text: string): void {
    this.line(0, this.paint('1', text));
  }

  event(event: AgentEvent): void {
    switch (event.type) {
      case 'agentStart':
        return this.line(0, this.paint('1', `▶ run started`) + this.paint('2', ` (${event.runId})`));
      case 'turnStart':
        this.turnOpen = true;
        return this.line(0, this.paint('1', `turn ${event.turnIndex}`));
      case 'beforeModelCall':
        return this.line(
          1,
          this.paint('2', `⋯ calling ${event.model} with ${plural(event.messages.length, 'message')}`),
        );
      case 'messageStart':
      case 'messageUpdate':
        // Deltas are published once the attempt is final, all at once: messageEnd shows the whole reply.
        return;
      case 'messageEnd':
        return this.assistant(event);
      case 'toolApprovalRequested':
        return this.line(
          1,
          this.paint('33', `? ${event.toolName} asks for approval`) +
            ` ${oneLine(JSON.stringify(event.arguments), 60)}`,
        );
      case 'toolApprovalResolved':
        return this.line(
          1,
          event.approved
            ? this.paint('32', `✔ ${event.toolName} approved`)
            : this.paint('31', `✘ ${event.toolName} denied`),
        );
      case 'toolExecutionStart':
        return this.line(1, `▷ ${event.toolName} started`);
      case 'toolExecutionUpdate':
        return this.progress(event);
      case 'toolExecutionEnd': {
        const mark = event.isError ? this.paint('31', `✗ ${event.toolName}`) : this.paint('32', `✓ ${event.toolName}`);
        return this.line(1, `${mark}: ${summarize(event.result)}`);
      }
      case 'turnEnd': {
        const errors = event.toolResults.filter((result) => result.isError).length;
        const results = event.toolResults.length
          ? ` · ${plural(event.toolResults.length, 'tool result')}${errors ? `, ${plural(errors, 'error')}` : ''}`
          : '';
        this.line(1, this.paint('1', `■ turn ${event.turnIndex} ended: ${event.reason}`) + results);
        this.turnOpen = false;
        return;
      }
      case 'retry':
        return this.line(
          1,
          this.paint(
            '33',
            `↻ retry ${event.attempt} in ${event.delayMs} ms after ${event.error.kind}: ${oneLine(event.error.message, 60)}`,
          ),
        );
      case 'modelFallback':
        return this.line(1, this.paint('33', `⇢ model fallback: ${event.from} → ${event.to}`));
      case 'contextCompacted':
        return this.line(1, `⇲ context compacted: ${event.before.messages} → ${event.after.messages} messages`);
      case 'policyError':
        return this.line(1, this.paint('31', `! ${event.slot} hook threw (counted as continue): ${event.message}`));
      case 'agentEnd':
        this.turnOpen = false;
        return this.line(0, this.paint('1', `■ run ended: ${event.status} (${event.endReason})`));
    }
  }

  /** The run's outcome, invariant check and the counters table. */
  summary(result: RunResult, violations: readonly string[], elapsedMs: number): void {
    this.line(0, '');
    this.line(0, `status ${result.status} · endReason ${result.endReason} · ${(elapsedMs / 1000).toFixed(2)} s`);
    if (result.error) this.line(0, this.paint('31', `error ${result.error.code}: ${result.error.message}`));
    this.line(
      0,
      violations.length === 0
        ? 'checkInvariants: ok'
        : this.paint('31', `checkInvariants: ${violations.length} violations`),
    );
    for (const violation of violations) this.line(1, violation);
    this.line(0, '');
    this.heading('counters');
    for (const row of counterRows(result.counters)) this.line(1, row);
  }

  private assistant(event: AgentEventOf<'messageEnd'>): void {
    const { message } = event;
    for (const block of message.content) {
      if (block.type === 'thinking') this.line(1, this.paint('2', `thinking: ${oneLine(block.text)}`));
      if (block.type === 'text') {
        const [first = '', ...rest] = block.text.split('\n');
        this.line(1, `${this.paint('35', 'assistant:')} ${first}`);
        for (const more of rest) this.line(1, `           ${more}`);
      }
      if (block.type === 'toolCall') this.line(1, `→ ${block.name} ${oneLine(JSON.stringify(block.arguments), 72)}`);
    }
    if (message.stopReason === 'error')
      this.line(1, this.paint('31', `✗ model error: ${message.errorMessage ?? 'unknown'}`));
    if (message.stopReason === 'aborted') this.line(1, this.paint('31', '✗ model stream aborted'));
  }

  private progress(event: AgentEventOf<'toolExecutionUpdate'>): void {
    const { partial } = event;
    const text = isDemoProgress(partial)
      ? `${Math.round(partial.percent)}%${partial.detail ? ` ${partial.detail}` : ''}`
      : oneLine(JSON.stringify(partial) ?? String(partial), 60);
    const overwrite = this.options.tty && this.lastProgressCall === event.toolCallId;
    // Cursor up one line and clear it: a tool's progress stays on one line in a terminal.
    if (overwrite) this.options.write('\x1b[1A\x1b[2K');
    this.line(1, this.paint('2', `⚙ ${event.toolName} ${text}`));
    this.lastProgressCall = event.toolCallId;
  }

  private line(depth: number, text: string): void {
    this.lastProgressCall = null;
    this.options.write(`${'  '.repeat(depth)}${text}\n`);
  }

  private paint(code: string, text: string): string {
    return this.options.tty ? `\x1b[${code}m${text}\x1b[0m` : text;
  }
}

/** The counters as a two-column table, in the contract's order. */
export function counterRows(counters: Counters): string[] {
  const cells = COUNTER_ORDER.map((key) => `${key.padEnd(19)} ${formatCounter(key, counters).padStart(8)}`);
  const half = Math.ceil(cells.length / 2);
  const rows: string[] = [];
  for (let i = 0; i < half; i++)
    rows.push([cells[i], cells[i + half]].filter((cell) => cell !== undefined).join('    '));
  return rows;
}

function formatCounter(key: keyof Counters, counters: Counters): string {
  if (key === 'failureCodes') {
    const entries = Object.entries(counters.failureCodes);
    return entries.length === 0 ? 'none' : entries.map(([code, n]) => `${code}=${n}`).join(',');
  }
  if (key === 'costUsd') return `$${counters.costUsd.toFixed(4)}`;
  return String(counters[key]);
}

/** The first line of a tool result, with a count of the lines left out. */
function summarize(result: string): string {
  const lines = result.split('\n');
  const more = lines.length > 1 ? ` (+${lines.length - 1} lines)` : '';
  return oneLine(lines[0] ?? '', ONE_LINE_MAX - more.length) + more;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function oneLine(text: string, max = ONE_LINE_MAX): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
