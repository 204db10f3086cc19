import type { AgentEvent } from '../../domain/events.js';

/**
 * The agent events arranged as the viewer draws them: one block per turn, a lane for the model and
 * one lane per tool call, in the order the model asked for them. Pure data, no DOM.
 */

export interface TimePoint {
  entry: number;
  t: number;
}

export type SpanStatus = 'ok' | 'error' | 'cancelled' | 'open' | 'approved' | 'denied';

export interface TimelineSpan {
  kind: 'model' | 'approval' | 'execution' | 'result';
  from: TimePoint;
  /** Null while the span is still open at the end of the trace. */
  to: TimePoint | null;
  status: SpanStatus;
  /** Shown on hover: what the span was. */
  title: string;
}

export interface TimelineLane {
  /** `model`, or `tool:<toolCallId>`. */
  id: string;
  kind: 'model' | 'tool';
  label: string;
  spans: TimelineSpan[];
  /** Progress updates (tool lanes) and retries (model lane). */
  ticks: Array<TimePoint & { title: string }>;
}

export interface TimelineTurn {
  turnIndex: number;
  start: TimePoint;
  end: TimePoint | null;
  reason: string | null;
  lanes: TimelineLane[];
}

export interface TimelineSessionEvent extends TimePoint {
  type: string;
  text: string;
}

export interface TimelineData {
  turns: TimelineTurn[];
  /** Events outside any turn: agentStart, agentEnd, policy errors between turns. */
  session: TimelineSessionEvent[];
}

export function buildTimeline(items: ReadonlyArray<{ entry: number; t: number; event: AgentEvent }>): TimelineData {
  const turns: TimelineTurn[] = [];
  const session: TimelineSessionEvent[] = [];
  let open: TimelineTurn | null = null;

  const laneOf = (turn: TimelineTurn, id: string, kind: TimelineLane['kind'], label: string): TimelineLane => {
    let lane = turn.lanes.find((candidate) => candidate.id === id);
    if (!lane) {
      lane = { id, kind, label, spans: [], ticks: [] };
      turn.lanes.push(lane);
    }
    return lane;
  };
  const openSpan = (lane: TimelineLane, kind: TimelineSpan['kind']) =>
    [...lane.spans].reverse().find((span) => span.kind === kind && span.to === null) ?? null;

  for (const { entry, t, event } of items) {
    const at: TimePoint = { entry, t };
    if (event.type === 'turnStart') {
      open = { turnIndex: event.turnIndex, start: at, end: null, reason: null, lanes: [] };
      open.lanes.push({ id: 'model', kind: 'model', label: 'model', spans: [], ticks: [] });
      turns.push(open);
      continue;
    }
    const turn: TimelineTurn | null = open;
    if (turn === null) {
      session.push({ ...at, type: event.type, text: sessionText(event) });
      continue;
    }
    const model = laneOf(turn, 'model', 'model', 'model');
    switch (event.type) {
      case 'beforeModelCall':
        model.spans.push({ kind: 'model', from: at, to: null, status: 'open', title: `model call: ${event.model}` });
        break;
      case 'messageEnd': {
        const span = openSpan(model, 'model') ?? {
          kind: 'model' as const,
          from: at,
          to: null,
          status: 'open' as const,
          title: 'model',
        };
        if (!model.spans.includes(span)) model.spans.push(span);
        span.to = at;
        const stop = event.message.stopReason;
        span.status = stop === 'error' ? 'error' : stop === 'aborted' ? 'cancelled' : 'ok';
        const calls = event.message.content.filter((block) => block.type === 'toolCall');
        span.title = `${span.title} → ${stop}${calls.length > 0 ? `, ${calls.length} tool call${calls.length === 1 ? '' : 's'}` : ''}`;
        // Lanes in the order the model asked for the calls, before any of them starts.
        for (const call of calls)
          if (call.type === 'toolCall') laneOf(turn, `tool:${call.id}`, 'tool', `${call.name} · ${call.id}`);
        break;
      }
      case 'retry': {
        const span = openSpan(model, 'model');
        if (span) {
          span.to = at;
          span.status = 'error';
          span.title = `${span.title} → ${event.error.kind}`;
        }
        model.ticks.push({ ...at, title: `retry ${event.attempt} in ${event.delayMs} ms (${event.error.kind})` });
        break;
      }
      case 'modelFallback':
        model.ticks.push({ ...at, title: `fallback ${event.from} → ${event.to}` });
        break;
      case 'contextCompacted':
        model.ticks.push({ ...at, title: `context compacted: ${event.before.tokens} → ${event.after.tokens} tokens` });
        break;
      case 'toolApprovalRequested': {
        const lane = laneOf(turn, `tool:${event.toolCallId}`, 'tool', `${event.toolName} · ${event.toolCallId}`);
        lane.spans.push({ kind: 'approval', from: at, to: null, status: 'open', title: 'waiting for approval' });
        break;
      }
      case 'toolApprovalResolved': {
        const lane = laneOf(turn, `tool:${event.toolCallId}`, 'tool', `${event.toolName} · ${event.toolCallId}`);
        const span = openSpan(lane, 'approval');
        if (span) {
          span.to = at;
          span.status = event.approved ? 'approved' : 'denied';
          span.title = event.approved ? 'approved' : 'denied';
        }
        break;
      }
      case 'toolExecutionStart': {
        const lane = laneOf(turn, `tool:${event.toolCallId}`, 'tool', `${event.toolName} · ${event.toolCallId}`);
        lane.spans.push({
          kind: 'execution',
          from: at,
          to: null,
          status: 'open',
          title: `${event.toolName}(${short(JSON.stringify(event.arguments), 80)})`,
        });
        break;
      }
      case 'toolExecutionUpdate': {
        const lane = laneOf(turn, `tool:${event.toolCallId}`, 'tool', `${event.toolName} · ${event.toolCallId}`);
        lane.ticks.push({ ...at, title: short(JSON.stringify(event.partial) ?? '', 120) });
        break;
      }
      case 'toolExecutionEnd': {
        const lane = laneOf(turn, `tool:${event.toolCallId}`, 'tool', `${event.toolName} · ${event.toolCallId}`);
        const span = openSpan(lane, 'execution');
        const status: SpanStatus = event.isError
          ? /^(aborted|cancelled):/.test(event.result)
            ? 'cancelled'
            : 'error'
          : 'ok';
        if (span) {
          span.to = at;
          span.status = status;
          span.title = `${span.title} → ${short(event.result, 160)}`;
        } else {
          // Never started (unknown, invalid, skipped, rejected, stopped): the result alone.
          lane.spans.push({ kind: 'result', from: at, to: at, status, title: short(event.result, 160) });
        }
        break;
      }
      case 'turnEnd':
        turn.end = at;
        turn.reason = event.reason;
        open = null;
        break;
      case 'agentEnd':
        session.push({ ...at, type: event.type, text: sessionText(event) });
        break;
      default:
        break;
    }
  }
  return { turns, session };
}

function sessionText(event: AgentEvent): string {
  switch (event.type) {
    case 'agentStart':
      return 'agent started';
    case 'agentEnd':
      return `agent ended: ${event.status} · ${event.endReason}`;
    case 'policyError':
      return `policy error (${event.slot}): ${event.message}`;
    default:
      return event.type;
  }
}

function short(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
