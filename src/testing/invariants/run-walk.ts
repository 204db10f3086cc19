import type { AgentEvent, AgentEventOf, AgentEventType } from '../../domain/index.js';
import {
  callsOf,
  hasTurnIndex,
  hasValidSeq,
  type LoggedEvent,
  type RunLog,
  TOOL_EVENTS,
  TURN_SCOPED,
} from './common.js';
import { checkTurnEndParity } from './parity.js';
import { TurnToolTracker } from './tool-lifecycle.js';

type Logged<T extends AgentEventType> = LoggedEvent & { event: AgentEventOf<T> };

interface OpenTurn {
  readonly index: number | undefined;
  readonly label: string;
  readonly startAt: string;
  sawModelCall: boolean;
  firstMessageStartAt: string | null;
  openMessageAt: string | null;
  streamed: Logged<'messageEnd'> | null;
  readonly tools: TurnToolTracker;
}

function is<T extends AgentEventType>(logged: LoggedEvent, type: T): logged is Logged<T> {
  return logged.event.type === type;
}

/**
 * One pass over a run: seq order, agentStart/agentEnd placement, turn and message pairing,
 * turnIndex on turn-scoped events, tool lifecycle and attribution, and event-log parity at each
 * turnEnd.
 */
export function walkRun(run: RunLog, out: string[]): void {
  const { runId, events } = run;
  let previousSeq: number | null = null;
  let lastTurnIndex: number | undefined;
  let turn: OpenTurn | null = null;
  const agentEnds: LoggedEvent[] = [];

  const closeTurn = (turnEnd: Logged<'turnEnd'> | null): void => {
    if (!turn) return;
    if (turn.openMessageAt !== null) out.push(`pairing: messageStart at ${turn.openMessageAt} has no messageEnd`);
    if (turnEnd) {
      turn.tools.close(callsOf(turnEnd.event.assistant));
    } else {
      out.push(`pairing: ${turn.label} started at ${turn.startAt} has no turnEnd`);
    }
    turn = null;
  };

  events.forEach((logged, position) => {
    const { event, at, index } = logged;
    const type = event.type;

    if (hasValidSeq(event)) {
      if (previousSeq !== null && event.seq <= previousSeq) {
        out.push(
          `seq: ${type} at index ${index} has seq ${event.seq}, not greater than seq ${previousSeq} before it (run ${runId})`,
        );
      }
      previousSeq = event.seq;
    } else {
      out.push(`seq: ${type} at index ${index} has no valid seq (run ${runId})`);
    }

    if (type === 'agentStart') {
      if (position !== 0) out.push(`pairing: agentStart at ${at} is not the first event of run ${runId}`);
    } else if (position === 0) {
      out.push(`pairing: run ${runId} does not start with agentStart (first event is ${type} at ${at})`);
    }
    if (type === 'agentEnd') agentEnds.push(logged);

    if (turn && type !== 'turnStart') checkTurnIndex(event, at, turn, out);

    if (type === 'turnStart') {
      if (!hasTurnIndex(event)) out.push(`seq: turnStart at ${at} has no turnIndex`);
      else if (lastTurnIndex !== undefined && event.turnIndex <= lastTurnIndex) {
        out.push(
          `seq: turnStart at ${at} has turnIndex ${event.turnIndex}, not greater than the previous turn ${lastTurnIndex} (run ${runId})`,
        );
      }
      if (turn) out.push(`pairing: turnStart at ${at} while ${turn.label} from ${turn.startAt} is still open`);
      const turnIndex = hasTurnIndex(event) ? event.turnIndex : undefined;
      if (turnIndex !== undefined) lastTurnIndex = turnIndex;
      const label = `turn ${turnIndex ?? '?'}`;
      turn = {
        index: turnIndex,
        label,
        startAt: at,
        sawModelCall: false,
        firstMessageStartAt: null,
        openMessageAt: null,
        streamed: null,
        tools: new TurnToolTracker(label, out),
      };
      return;
    }

    if (is(logged, 'turnEnd')) {
      if (!turn) out.push(`pairing: turnEnd at ${at} without an open turn`);
      checkTurnEndParity(logged, turn?.streamed ?? null, out);
      closeTurn(logged);
      return;
    }

    if (type === 'toolsChanged' && turn)
      out.push(`pairing: toolsChanged at ${at} inside ${turn.label}: tool lists change between turns only`);
    if (!TURN_SCOPED.has(type)) return;
    if (!turn) {
      out.push(`pairing: ${type} at ${at} outside a turn`);
      return;
    }
    onTurnEvent(logged, turn, out);
  });

  if (turn) closeTurn(null);
  checkAgentEnds(runId, events, agentEnds, out);
}

function checkTurnIndex(event: AgentEvent, at: string, turn: OpenTurn, out: string[]): void {
  if (turn.index === undefined || event.type === 'agentEnd') return;
  if (!hasTurnIndex(event)) out.push(`seq: ${event.type} at ${at} has no turnIndex while ${turn.label} is open`);
  else if (event.turnIndex !== turn.index) {
    out.push(`seq: ${event.type} at ${at} has turnIndex ${event.turnIndex} but the open turn is ${turn.index}`);
  }
}

function onTurnEvent(logged: LoggedEvent, turn: OpenTurn, out: string[]): void {
  const { event, at } = logged;
  switch (event.type) {
    case 'beforeModelCall':
      turn.sawModelCall = true;
      return;
    case 'messageStart':
      if (turn.openMessageAt !== null) {
        out.push(`pairing: messageStart at ${at} while the message from ${turn.openMessageAt} is still open`);
      } else if (turn.firstMessageStartAt !== null) {
        out.push(`pairing: second messageStart at ${at} in ${turn.label} (first at ${turn.firstMessageStartAt})`);
      }
      if (!turn.sawModelCall)
        out.push(`pairing: messageStart at ${at} has no beforeModelCall before it in ${turn.label}`);
      turn.firstMessageStartAt ??= at;
      turn.openMessageAt = at;
      return;
    case 'messageUpdate':
      if (turn.openMessageAt === null) out.push(`pairing: messageUpdate at ${at} without an open message`);
      return;
    case 'messageEnd':
      if (turn.openMessageAt === null) out.push(`pairing: messageEnd at ${at} without an open message`);
      turn.openMessageAt = null;
      turn.streamed = logged as Logged<'messageEnd'>;
      turn.tools.setStreamedCalls(callsOf(event.message), at);
      return;
    default:
      if (!TOOL_EVENTS.has(event.type)) return;
      if (turn.streamed === null) {
        const id = 'toolCallId' in event ? ` for ${event.toolCallId}` : '';
        out.push(`pairing: ${event.type} at ${at}${id} precedes ${turn.label}'s assistant messageEnd`);
      }
      turn.tools.onEvent(logged as Parameters<TurnToolTracker['onEvent']>[0]);
  }
}

function checkAgentEnds(
  runId: string,
  events: readonly LoggedEvent[],
  agentEnds: readonly LoggedEvent[],
  out: string[],
): void {
  if (agentEnds.length === 0) {
    out.push(`pairing: run ${runId} has no agentEnd`);
    return;
  }
  if (agentEnds.length > 1) {
    out.push(
      `pairing: run ${runId} has ${agentEnds.length} agentEnd events (${agentEnds.map((e) => e.at).join(', ')})`,
    );
  }
  const last = events[events.length - 1];
  if (last.event.type !== 'agentEnd') {
    const lastEnd = agentEnds[agentEnds.length - 1];
    out.push(
      `pairing: agentEnd at ${lastEnd.at} is not the last event of run ${runId} (the run ends with ${last.event.type} at ${last.at})`,
    );
  }
}
