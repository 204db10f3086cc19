import type { Attributes, Context, Span, SpanKind, Tracer } from '@opentelemetry/api';
import type { AgentEvent, AgentEventOf } from '../domain/events.js';
import type { OtelApi } from './api.js';
import { ABORTED, AGENTCHART, ERROR_TYPE, GEN_AI, SPAN_EVENT, TOOL_ERROR } from './attributes.js';
import { finishReasonOf, inputMessagesJson, outputMessagesJson, systemInstructionsJson } from './content.js';

/** What every run of one observed agent shares. */
export interface TraceSettings {
  readonly api: OtelApi;
  readonly tracer: Tracer;
  readonly agentName: string | undefined;
  readonly conversationId: string;
  readonly captureContent: boolean;
  readonly systemPrompt: string | undefined;
}

interface OpenTurn {
  index: number;
  span: Span;
  context: Context;
  /** The error kind of the turn's last failed attempt: the turn's error.type if it ends in error. */
  lastError: string | null;
}

/** The conventions' fallback for a value none of the known ones fits. */
const OTHER = '_OTHER';

/**
 * The spans of one run, driven by its events: `invoke_agent` → turn → `chat <model>` per attempt and
 * `execute_tool <tool>` per call. Parents are passed explicitly, so no context manager is needed.
 */
export class RunSpans {
  private turn: OpenTurn | null = null;
  private chat: Span | null = null;
  private readonly tools = new Map<string, Span>();

  private constructor(
    private readonly settings: TraceSettings,
    private readonly agent: Span,
    private readonly agentContext: Context,
  ) {}

  /**
   * Opens the run's agent span on its first event (agentStart, or any event of a run resumed after a
   * restart). A span that is not recording (no SDK registered, or not sampled) means the run records
   * nothing: null, and every later event of the run costs one map look-up.
   */
  static open(settings: TraceSettings, first: AgentEvent): RunSpans | null {
    const { api, tracer, agentName, conversationId } = settings;
    const attributes: Attributes = {
      [GEN_AI.operationName]: 'invoke_agent',
      [GEN_AI.conversationId]: conversationId,
      [AGENTCHART.runId]: first.runId,
      ...(agentName !== undefined ? { [GEN_AI.agentName]: agentName } : {}),
      ...(first.type !== 'agentStart' ? { [AGENTCHART.runResumed]: true } : {}),
    };
    const name = agentName !== undefined ? `invoke_agent ${agentName}` : 'invoke_agent';
    // Under the caller's span when the app has a context manager; a root span otherwise.
    const span = tracer.startSpan(name, { kind: api.SpanKind.INTERNAL, attributes }, api.context.active());
    if (!span.isRecording()) {
      span.end();
      return null;
    }
    return new RunSpans(settings, span, api.trace.setSpan(api.ROOT_CONTEXT, span));
  }

  /** Applies one event; true once the run has ended (every span it opened is ended). */
  handle(event: AgentEvent): boolean {
    switch (event.type) {
      case 'turnStart':
        this.openTurn(event.turnIndex, false);
        if (event.steeringDelivered) {
          const delivered = { [AGENTCHART.steeringDelivered]: event.steeringDelivered };
          this.spanFor(event.turnIndex).addEvent(SPAN_EVENT.steering, delivered);
        }
        return false;
      case 'beforeModelCall':
        this.startChat(event);
        return false;
      case 'messageEnd':
        this.endChat(event);
        return false;
      case 'toolApprovalRequested':
      case 'toolApprovalResolved':
        this.recordApproval(event);
        return false;
      case 'toolExecutionStart':
        this.startTool(event, event.arguments);
        return false;
      case 'toolExecutionEnd':
        this.endTool(event);
        return false;
      case 'turnEnd':
        this.closeTurn(event);
        return false;
      case 'retry':
        this.failChat(event.error.kind, event.error.message);
        this.spanFor(event.turnIndex).addEvent(SPAN_EVENT.retry, {
          [AGENTCHART.retryAttempt]: event.attempt,
          [AGENTCHART.retryDelayMs]: event.delayMs,
          [ERROR_TYPE]: event.error.kind,
        });
        return false;
      case 'modelFallback':
        if (event.error) this.failChat(event.error.kind, event.error.message);
        this.spanFor(event.turnIndex).addEvent(SPAN_EVENT.modelFallback, {
          [AGENTCHART.fallbackFrom]: event.from,
          [AGENTCHART.fallbackTo]: event.to,
          ...(event.error ? { [ERROR_TYPE]: event.error.kind } : {}),
        });
        return false;
      case 'contextCompacted':
        // Recovery follows an attempt the provider refused for its size.
        this.failChat('contextOverflow', 'context overflow');
        this.spanFor(event.turnIndex).addEvent(SPAN_EVENT.contextCompacted, {
          [AGENTCHART.contextMessagesBefore]: event.before.messages,
          [AGENTCHART.contextMessagesAfter]: event.after.messages,
          [AGENTCHART.contextTokensBefore]: event.before.tokens,
          [AGENTCHART.contextTokensAfter]: event.after.tokens,
        });
        return false;
      case 'policyError':
        this.spanFor(event.turnIndex).addEvent(SPAN_EVENT.policyError, { [AGENTCHART.policySlot]: event.slot });
        return false;
      case 'agentEnd':
        this.end(event);
        return true;
      default:
        // agentStart opened the span; stream deltas, tool progress and later event types make no span.
        return false;
    }
  }

  private child(name: string, kind: SpanKind, parent: Context, attributes: Attributes): Span {
    return this.settings.tracer.startSpan(name, { kind, attributes }, parent);
  }

  /** The open turn; a run resumed inside a turn opens it at the first event that names it. */
  private openTurn(index: number, resumed: boolean): OpenTurn {
    if (this.turn?.index === index) return this.turn;
    if (this.turn) this.closeTurnSpan(this.turn, null);
    const { api } = this.settings;
    const span = this.child('turn', api.SpanKind.INTERNAL, this.agentContext, {
      [AGENTCHART.turnIndex]: index,
      ...(resumed ? { [AGENTCHART.runResumed]: true } : {}),
    });
    this.turn = { index, span, context: api.trace.setSpan(api.ROOT_CONTEXT, span), lastError: null };
    return this.turn;
  }

  /** Where a session-level event (retry, fallback, compaction) goes: its turn if open, else the agent span. */
  private spanFor(turnIndex: number | undefined): Span {
    return this.turn && (turnIndex === undefined || turnIndex === this.turn.index) ? this.turn.span : this.agent;
  }

  private startChat(event: AgentEventOf<'beforeModelCall'>): void {
    const turn = this.openTurn(event.turnIndex, true);
    if (this.chat) this.failChat(OTHER, 'superseded by another attempt');
    const { api, captureContent, systemPrompt, conversationId } = this.settings;
    this.chat = this.child(`chat ${event.model}`, api.SpanKind.CLIENT, turn.context, {
      [GEN_AI.operationName]: 'chat',
      [GEN_AI.providerName]: event.provider ?? OTHER,
      [GEN_AI.requestModel]: event.model,
      [GEN_AI.conversationId]: conversationId,
      ...(captureContent ? { [GEN_AI.inputMessages]: inputMessagesJson(event.messages) } : {}),
      ...(captureContent && systemPrompt !== undefined
        ? { [GEN_AI.systemInstructions]: systemInstructionsJson(systemPrompt) }
        : {}),
    });
  }

  /** The attempt's reply: response attributes, usage, and error.type when it failed or was aborted. */
  private endChat(event: AgentEventOf<'messageEnd'>): void {
    const chat = this.chat;
    // The empty message that closes a turn an abort left open follows no attempt.
    if (!chat) return;
    const { message } = event;
    const usage = message.usage;
    chat.setAttributes({
      [GEN_AI.finishReasons]: [finishReasonOf(message.stopReason)],
      ...(message.model !== undefined ? { [GEN_AI.responseModel]: message.model } : {}),
      ...(usage
        ? {
            [GEN_AI.inputTokens]: usage.input + (usage.cacheRead ?? 0) + (usage.cacheWrite ?? 0),
            [GEN_AI.outputTokens]: usage.output,
            ...(usage.cacheRead ? { [GEN_AI.cacheReadTokens]: usage.cacheRead } : {}),
            ...(usage.cacheWrite ? { [GEN_AI.cacheWriteTokens]: usage.cacheWrite } : {}),
          }
        : {}),
      ...(this.settings.captureContent ? { [GEN_AI.outputMessages]: outputMessagesJson(message) } : {}),
    });
    const unclassified = message.stopReason === 'aborted' ? ABORTED : message.stopReason === 'error' ? OTHER : null;
    const kind = event.error?.kind ?? unclassified;
    if (kind !== null) this.failChat(kind, event.error?.message ?? message.errorMessage ?? kind);
    else chat.end();
    this.chat = null;
  }

  /** Ends the open attempt as failed with agentchart's error kind (no-op when none is open). */
  private failChat(kind: string, message: string): void {
    if (!this.chat) return;
    this.markFailed(this.chat, kind, message);
    this.chat.end();
    this.chat = null;
    if (this.turn) this.turn.lastError = kind;
  }

  private markFailed(span: Span, kind: string, message: string | undefined): void {
    span.setAttribute(ERROR_TYPE, kind);
    span.setStatus({ code: this.settings.api.SpanStatusCode.ERROR, ...(message !== undefined ? { message } : {}) });
  }

  private recordApproval(event: AgentEventOf<'toolApprovalRequested' | 'toolApprovalResolved'>): void {
    const turn = this.openTurn(event.turnIndex, true);
    const call = { [GEN_AI.toolName]: event.toolName, [GEN_AI.toolCallId]: event.toolCallId };
    if (event.type === 'toolApprovalRequested') turn.span.addEvent(SPAN_EVENT.approvalRequested, call);
    else turn.span.addEvent(SPAN_EVENT.approvalResolved, { ...call, [AGENTCHART.approvalApproved]: event.approved });
  }

  /** `args` null: the call never started (its span holds only its result). */
  private startTool(
    call: AgentEventOf<'toolExecutionStart' | 'toolExecutionEnd'>,
    args: Record<string, unknown> | null,
  ): Span {
    const turn = this.openTurn(call.turnIndex, true);
    const span = this.child(`execute_tool ${call.toolName}`, this.settings.api.SpanKind.INTERNAL, turn.context, {
      [GEN_AI.operationName]: 'execute_tool',
      [GEN_AI.toolName]: call.toolName,
      [GEN_AI.toolCallId]: call.toolCallId,
      [GEN_AI.toolType]: 'function',
      ...(args === null ? { [AGENTCHART.toolStarted]: false } : {}),
      ...(this.settings.captureContent && args !== null ? { [GEN_AI.toolArguments]: JSON.stringify(args) } : {}),
    });
    this.tools.set(call.toolCallId, span);
    return span;
  }

  /** A call that never started (unknown, invalid, skipped, rejected, stopped) gets a span of its result alone. */
  private endTool(event: AgentEventOf<'toolExecutionEnd'>): void {
    const span = this.tools.get(event.toolCallId) ?? this.startTool(event, null);
    this.tools.delete(event.toolCallId);
    const capture = this.settings.captureContent;
    if (capture) span.setAttribute(GEN_AI.toolResult, event.result);
    // The result text is content: it becomes the status message only when content is captured.
    if (event.isError) this.markFailed(span, TOOL_ERROR, capture ? event.result : undefined);
    span.end();
  }

  private closeTurn(event: AgentEventOf<'turnEnd'>): void {
    const turn = this.openTurn(event.turnIndex, true);
    this.closeTurnSpan(turn, event.reason);
  }

  /** Ends a turn and whatever it left open; `reason` null: closed without its turnEnd. */
  private closeTurnSpan(turn: OpenTurn, reason: AgentEventOf<'turnEnd'>['reason'] | null): void {
    const cut = reason === 'aborted' ? ABORTED : OTHER;
    this.endOpenChildren(cut);
    if (reason !== null) turn.span.setAttribute(AGENTCHART.turnEndReason, reason);
    if (reason === 'aborted') this.markFailed(turn.span, ABORTED, undefined);
    if (reason === 'error') this.markFailed(turn.span, turn.lastError ?? OTHER, undefined);
    turn.span.end();
    if (this.turn === turn) this.turn = null;
  }

  private endOpenChildren(kind: string): void {
    this.failChat(kind, kind);
    for (const span of this.tools.values()) {
      this.markFailed(span, kind, undefined);
      span.end();
    }
    this.tools.clear();
  }

  /** The run ended: every span it opened ends, children first. */
  private end(event: AgentEventOf<'agentEnd'>): void {
    const aborted = event.status === 'aborted';
    if (this.turn) this.closeTurnSpan(this.turn, aborted ? 'aborted' : null);
    this.endOpenChildren(aborted ? ABORTED : OTHER);
    this.agent.setAttributes({ [AGENTCHART.runStatus]: event.status, [AGENTCHART.runEndReason]: event.endReason });
    if (event.status !== 'completed') this.markFailed(this.agent, aborted ? ABORTED : event.endReason, undefined);
    this.agent.end();
  }
}
