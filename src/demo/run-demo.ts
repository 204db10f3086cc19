import {
  createAgent,
  type Agent,
  type AgentEvent,
  type AgentOptions,
  type Model,
  type RunResult,
  type SessionStore,
  type SteerReceipt,
} from '../index.js';
import type { AgentObserver } from '../index.js';
import { checkInvariants, scriptedModel, type Clock } from '../testing.js';
import { TerminalRenderer } from './renderer.js';
import { DEMO_SCRIPT, STEER_AT_PERCENT, STEERING_MESSAGE, SYSTEM_PROMPT, USER_PROMPT } from './script.js';
import { demoTools, isDemoProgress } from './tools.js';
import { Workspace } from './workspace.js';

export interface DemoOptions {
  /** Receives the transcript, line by line (each chunk ends with a newline). */
  write: (text: string) => void;
  /** Every delay of the demo (tools, scripted model, steering grace); real timers by default. */
  clock?: Clock;
  /** A real provider's model; the offline scripted model when absent. */
  model?: Model;
  /** A terminal: colors and in-place progress lines. Default false (plain text). */
  tty?: boolean;
  /** Printed under the title: where the model comes from. */
  modelDescription?: string;
  /** XState inspection observer (`--inspect`, `--trace`). */
  inspect?: AgentOptions['inspect'];
  /** Sees every agent event as it happens, before it is printed (`--trace`). */
  onEvent?: (event: AgentEvent) => void;
  /** OpenTelemetry spans of the session (`--otel`). */
  otel?: AgentObserver;
  /**
   * Shown in the studio (`--studio`): the session is stored and streams live; the write's approval
   * waits for the page (`'page'`) or the pretend user answers it through resolveApproval (`'auto'`).
   */
  studio?: { store: SessionStore; sessionId: string; approvals: 'page' | 'auto'; onAgent(agent: Agent): void };
}

export interface DemoOutcome {
  result: RunResult;
  events: AgentEvent[];
  violations: string[];
  steering: SteerReceipt | null;
  elapsedMs: number;
}

export const SCRIPTED_MODEL_NAME = 'scripted-coder';
/** Shorter than the default 250 ms so the demo stays brisk; still longer than the fast tools take. */
export const STEERING_GRACE_MS = 120;
/** How long the pretend user takes to click "approve". */
const APPROVAL_THINK_MS = 50;
/** Bounds a real model's session (and its cost); the script needs 4 turns. */
const MAX_TURNS = 8;

const realTimers: Clock = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (id) => globalThis.clearTimeout(id as ReturnType<typeof globalThis.setTimeout>),
};

/**
 * One coding-assistant session, printed as it happens: parallel tools with progress, a steering
 * message while the test suite runs, an approved file write, and a final answer.
 */
export async function runDemo(options: DemoOptions): Promise<DemoOutcome> {
  const clock = options.clock ?? realTimers;
  const renderer = new TerminalRenderer({ write: options.write, tty: options.tty ?? false });
  const model = options.model ?? scriptedModel(DEMO_SCRIPT, { name: SCRIPTED_MODEL_NAME, clock });
  const workspace = new Workspace();

  const studio = options.studio;
  const agent = createAgent({
    model,
    systemPrompt: SYSTEM_PROMPT,
    tools: demoTools(workspace, clock),
    steeringGraceMs: STEERING_GRACE_MS,
    maxTurns: MAX_TURNS,
    clock,
    ...(options.inspect ? { inspect: options.inspect } : {}),
    ...(options.otel ? { otel: options.otel } : {}),
    // In the studio the approval is durable: the page (or the pretend user, through the same API) answers it.
    ...(studio
      ? { store: studio.store, sessionId: studio.sessionId, streaming: 'live' as const }
      : {
          approval: async (request: { toolName: string; arguments: Record<string, unknown> }) => {
            const path = typeof request.arguments.path === 'string' ? request.arguments.path : '?';
            renderer.say(
              `✋ approval handler: ${request.toolName} ${path} → auto-approved (an app would ask the user here)`,
            );
            await new Promise<void>((resolve) => clock.setTimeout(resolve, APPROVAL_THINK_MS));
            return { approved: true as const };
          },
        }),
  });
  if (studio) {
    await agent.ready;
    studio.onAgent(agent);
  }

  const events: AgentEvent[] = [];
  let steering: Promise<SteerReceipt> | null = null;
  const subscription = agent.events.subscribe((event) => {
    options.onEvent?.(event);
    events.push(event);
    renderer.event(event);
    if (studio && event.type === 'toolApprovalRequested')
      answerInStudio(agent, event, studio.approvals, clock, renderer);
    if (steering === null && isSteeringMoment(event)) {
      renderer.say(`you (steering): ${STEERING_MESSAGE}`, 'user');
      renderer.say(`✉ steering queued: unfinished tools get ${STEERING_GRACE_MS} ms, then are cancelled`);
      steering = agent.steer(STEERING_MESSAGE);
      void steering.then((receipt) =>
        renderer.say(
          receipt.status === 'delivered'
            ? `✉ steering delivered as the input of turn ${receipt.turnIndex}`
            : '✉ steering still queued: the run ended first',
        ),
      );
    }
  });

  renderer.heading(`agentchart demo · ${model.name}`);
  if (options.modelDescription) renderer.say(options.modelDescription);
  renderer.say('tools: read_file, grep, run_tests (report progress), write_file (needs approval)');
  renderer.say(`you: ${USER_PROMPT}`, 'user');

  const startedAt = performance.now();
  const result = await agent.prompt(USER_PROMPT).result;
  const elapsedMs = performance.now() - startedAt;
  const receipt = steering === null ? null : await (steering as Promise<SteerReceipt>);
  subscription.unsubscribe();

  const { violations } = checkInvariants(events, result.messages);
  renderer.summary(result, violations, elapsedMs);
  return { result, events, violations, steering: receipt, elapsedMs };
}

/** In the studio, the approval is answered on the page, or by the pretend user through the same public API. */
function answerInStudio(
  agent: Agent,
  event: Extract<AgentEvent, { type: 'toolApprovalRequested' }>,
  approvals: 'page' | 'auto',
  clock: Clock,
  renderer: TerminalRenderer,
): void {
  if (approvals === 'page') {
    renderer.say(`✋ ${event.toolName} waits for your approval on the studio page`);
    return;
  }
  clock.setTimeout(() => {
    const pending = agent.pendingApprovals().find((approval) => approval.toolCallId === event.toolCallId);
    if (!pending) return;
    renderer.say(`✋ ${event.toolName} approved by the pretend user (resolveApproval, version ${pending.version})`);
    agent.resolveApproval(pending.toolCallId, { approved: true }, { version: pending.version });
  }, APPROVAL_THINK_MS);
}

/** The pretend user steers once the first full test run is STEER_AT_PERCENT done. */
function isSteeringMoment(event: AgentEvent): boolean {
  return (
    event.type === 'toolExecutionUpdate' &&
    event.toolName === 'run_tests' &&
    isDemoProgress(event.partial) &&
    event.partial.percent >= STEER_AT_PERCENT
  );
}
