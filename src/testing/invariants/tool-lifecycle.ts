import type { AgentEventOf } from '../../domain/index.js';
import type { CallRef, LoggedEvent } from './common.js';

type ToolEvent = AgentEventOf<
  | 'toolApprovalRequested'
  | 'toolApprovalResolved'
  | 'toolExecutionStart'
  | 'toolExecutionUpdate'
  | 'toolExecutionEnd'
  | 'elicitationRequested'
  | 'elicitationResolved'
>;

interface ApprovalState {
  /** Locator of the unresolved request, or null when none is open. */
  openAt: string | null;
  lastDecision: { approved: boolean; at: string } | null;
}

/**
 * The tool events of one turn: approvals, starts, updates and ends, checked against the tool calls
 * of the turn's assistant. Ids are scoped to the turn (a model may reuse ids across turns).
 */
export class TurnToolTracker {
  private calls: Map<string, CallRef> | null = null;
  private callsAt = '';
  private readonly approvals = new Map<string, ApprovalState>();
  private readonly starts = new Map<string, { at: string; name: string }>();
  private readonly ends = new Map<string, { at: string }>();
  /** Each call's unanswered question (elicitationRequested), by call id. */
  private readonly questions = new Map<string, string>();

  constructor(
    private readonly turnLabel: string,
    private readonly out: string[],
  ) {}

  /** The assistant's tool calls as streamed by the turn's messageEnd. */
  setStreamedCalls(calls: readonly CallRef[], at: string): void {
    this.calls = new Map(calls.map((call) => [call.id, call]));
    this.callsAt = at;
  }

  onEvent(logged: LoggedEvent & { event: ToolEvent }): void {
    const { event, at } = logged;
    if (event.type === 'toolExecutionUpdate') {
      this.onUpdate(event, at);
      return;
    }
    if (event.type === 'elicitationRequested' || event.type === 'elicitationResolved') {
      this.onQuestion(event, at);
      return;
    }
    this.checkBelongsToAssistant(event, at);
    const id = event.toolCallId;
    switch (event.type) {
      case 'toolApprovalRequested': {
        const state = this.approvalOf(id);
        if (state.openAt !== null) {
          this.out.push(
            `pairing: toolApprovalRequested for ${id} at ${at} while the request at ${state.openAt} is unresolved`,
          );
        }
        state.openAt = at;
        break;
      }
      case 'toolApprovalResolved': {
        const state = this.approvalOf(id);
        if (state.openAt === null) {
          this.out.push(`pairing: toolApprovalResolved for ${id} at ${at} has no toolApprovalRequested before it`);
        }
        state.openAt = null;
        state.lastDecision = { approved: event.approved === true, at };
        break;
      }
      case 'toolExecutionStart':
        this.onStart(event, at);
        break;
      case 'toolExecutionEnd': {
        const question = this.questions.get(id);
        if (question)
          this.out.push(`pairing: elicitationRequested for ${id} at ${question} is unresolved at its call end ${at}`);
        const earlier = this.ends.get(id);
        if (earlier) this.out.push(`pairing: toolExecutionEnd for ${id} at ${at} duplicates the end at ${earlier.at}`);
        else this.ends.set(id, { at });
        break;
      }
    }
  }

  /**
   * At turnEnd: every committed tool call has exactly one toolExecutionEnd, every start has an end,
   * every approval request was resolved.
   */
  close(committedCalls: readonly CallRef[]): void {
    for (const [id, state] of this.approvals) {
      if (state.openAt !== null)
        this.out.push(`pairing: toolApprovalRequested for ${id} at ${state.openAt} is never resolved`);
    }
    for (const [id, start] of this.starts) {
      if (!this.ends.has(id))
        this.out.push(`pairing: toolExecutionStart for ${id} at ${start.at} has no toolExecutionEnd`);
    }
    for (const call of committedCalls) {
      if (!this.ends.has(call.id) && !this.starts.has(call.id)) {
        this.out.push(`parity: tool call ${call.id} (${call.name}) of ${this.turnLabel} has no toolExecutionEnd`);
      }
    }
  }

  private approvalOf(id: string): ApprovalState {
    let state = this.approvals.get(id);
    if (!state) {
      state = { openAt: null, lastDecision: null };
      this.approvals.set(id, state);
    }
    return state;
  }

  private checkBelongsToAssistant(event: Exclude<ToolEvent, AgentEventOf<'toolExecutionUpdate'>>, at: string): void {
    if (this.calls === null) return;
    const call = this.calls.get(event.toolCallId);
    if (!call) {
      this.out.push(
        `parity: ${event.type} at ${at} for ${event.toolCallId} (${event.toolName}) is not a tool call of ${this.turnLabel}'s assistant (messageEnd at ${this.callsAt})`,
      );
    } else if (call.name !== event.toolName) {
      this.out.push(
        `parity: ${event.type} at ${at} for ${event.toolCallId} names tool ${event.toolName} but the call is ${call.name}`,
      );
    }
  }

  private onStart(event: AgentEventOf<'toolExecutionStart'>, at: string): void {
    const id = event.toolCallId;
    const earlier = this.starts.get(id);
    if (earlier) {
      this.out.push(`pairing: toolExecutionStart for ${id} at ${at} repeats the start at ${earlier.at}`);
      return;
    }
    const ended = this.ends.get(id);
    if (ended)
      this.out.push(`pairing: toolExecutionStart for ${id} at ${at} comes after its toolExecutionEnd at ${ended.at}`);
    const approval = this.approvals.get(id);
    if (approval?.openAt != null) {
      this.out.push(
        `pairing: toolExecutionStart for ${id} at ${at} comes before its approval (requested at ${approval.openAt}) was resolved`,
      );
    } else if (approval?.lastDecision && !approval.lastDecision.approved) {
      this.out.push(
        `pairing: toolExecutionStart for ${id} at ${at} follows a denied approval at ${approval.lastDecision.at}`,
      );
    }
    this.starts.set(id, { at, name: event.toolName });
  }

  /** A running call's question: asked between the call's start and end, one at a time, each resolved once. */
  private onQuestion(event: AgentEventOf<'elicitationRequested' | 'elicitationResolved'>, at: string): void {
    const id = event.toolCallId;
    const start = this.starts.get(id);
    const end = this.ends.get(id);
    const problem = !start
      ? `has no started call in ${this.turnLabel}`
      : start.name !== event.toolName
        ? `names another tool than the call started as ${start.name} at ${start.at}`
        : end
          ? `comes after its toolExecutionEnd at ${end.at}`
          : null;
    if (problem) this.out.push(`attribution: ${event.type} at ${at} for ${id} (${event.toolName}) ${problem}`);
    const open = this.questions.get(id);
    if (event.type === 'elicitationRequested') {
      if (open)
        this.out.push(`pairing: elicitationRequested for ${id} at ${at} while the one at ${open} is unresolved`);
      this.questions.set(id, at);
    } else {
      if (!open) this.out.push(`pairing: elicitationResolved for ${id} at ${at} has no elicitationRequested before it`);
      this.questions.delete(id);
    }
  }

  private onUpdate(event: AgentEventOf<'toolExecutionUpdate'>, at: string): void {
    const id = event.toolCallId;
    if (typeof id !== 'string' || id === '' || typeof event.toolName !== 'string' || event.toolName === '') {
      this.out.push(`attribution: toolExecutionUpdate at ${at} has no toolCallId or toolName`);
      return;
    }
    const start = this.starts.get(id);
    if (!start) {
      this.out.push(
        `attribution: toolExecutionUpdate at ${at} for ${id} (${event.toolName}) has no started call in ${this.turnLabel}`,
      );
      return;
    }
    if (start.name !== event.toolName) {
      this.out.push(
        `attribution: toolExecutionUpdate at ${at} for ${id} names tool ${event.toolName} but the call started as ${start.name} at ${start.at}`,
      );
    }
    const end = this.ends.get(id);
    if (end)
      this.out.push(
        `attribution: toolExecutionUpdate at ${at} for ${id} (${event.toolName}) comes after its toolExecutionEnd at ${end.at}`,
      );
  }
}
