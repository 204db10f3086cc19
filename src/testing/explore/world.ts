import { modelError } from '../../domain/errors.js';
import type { Model, ModelStreamEvent } from '../../model/port.js';
import type { ApprovalDecision, ApprovalHandler, Policies } from '../../policies/types.js';
import type { AnyTool, ToolOutput } from '../../tools/types.js';
import { scriptedModel, type ScriptEntry } from '../scripted-model.js';

/**
 * The world an explored agent lives in: its model, its tools' bodies and its approval handler are
 * replaced by tasks that wait until the explorer releases them with one of their choices. Between
 * two releases the agent runs on its own until it waits on the world again (quiescence), so every
 * run is a sequence of the explorer's decisions and replays exactly.
 */

export type TaskKind = 'model' | 'tool' | 'approval';

/** One way a task can be released. `budgeted` choices (injected errors) use the interruption budget. */
export interface Choice {
  name: string;
  budgeted: boolean;
}

export interface Task {
  readonly id: number;
  readonly kind: TaskKind;
  /** The model call index, the tool call id, or the tool call id awaiting approval. */
  readonly subject: string;
  /** The tool's name (tool and approval tasks). */
  readonly toolName: string;
  readonly choices: readonly Choice[];
  release(choice: string): void;
}

export interface WorldConfig {
  replies: ReadonlyMap<string, ScriptEntry>;
  modelError: boolean;
  toolError: boolean;
  bodies: 'stub' | 'real';
  approvals: ReadonlyMap<string, ApprovalDecision>;
}

const ABANDONED = Symbol('abandoned');

export class World {
  /** Bumped by everything the agent does that the explorer can see: quiescence is no change. */
  activity = 0;
  modelCalls = 0;
  /** Tasks created so far: calls into the model, the tools' bodies and the approval handler. */
  created = 0;
  /** Every model request's messages (copied), in call order, across the agent's models. */
  readonly requests: Array<{ model: string; messages: unknown[] }> = [];
  /** Told of every new task: the calls into the world, the race driver's scheduling. */
  readonly watchers: Array<(task: Task) => void> = [];
  /** Told of every call of the agent's own policies (they run as they are, between the world's tasks). */
  onPolicyCall: (what: string) => void = () => {};
  private readonly pending: Task[] = [];

  constructor(readonly config: WorldConfig) {}

  touch(): void {
    this.activity++;
  }

  tasks(): readonly Task[] {
    return this.pending;
  }

  /** Waits until the explorer releases this task; `ABANDONED` when the signal aborts first. */
  wait(
    kind: TaskKind,
    subject: string,
    toolName: string,
    choices: Choice[],
    signal?: AbortSignal,
  ): Promise<string | typeof ABANDONED> {
    this.touch();
    return new Promise((resolve) => {
      const remove = () => {
        const index = this.pending.indexOf(task);
        if (index >= 0) this.pending.splice(index, 1);
        this.touch();
      };
      const onAbort = () => {
        remove();
        resolve(ABANDONED);
      };
      const task: Task = {
        id: this.created++,
        kind,
        subject,
        toolName,
        choices,
        release: (choice) => {
          signal?.removeEventListener('abort', onAbort);
          remove();
          resolve(choice);
        },
      };
      if (signal?.aborted) return resolve(ABANDONED);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.push(task);
      for (const watch of this.watchers) watch(task);
    });
  }

  /** A stand-in for one of the agent's models: every call waits for the explorer to pick its reply. */
  model(name: string, provider?: string): Model {
    const world = this;
    const choices: Choice[] = [...this.config.replies.keys()].map((reply) => ({
      name: `reply ${reply}`,
      budgeted: false,
    }));
    if (this.config.modelError) choices.push({ name: 'modelError', budgeted: true });
    return {
      name,
      ...(provider !== undefined ? { provider } : {}),
      stream(request, options) {
        const callIndex = world.modelCalls++;
        world.requests.push({ model: name, messages: copy(request.messages) });
        return (async function* (): AsyncGenerator<ModelStreamEvent> {
          const choice = await world.wait('model', String(callIndex), '', choices, options.signal);
          if (choice === ABANDONED) {
            yield { type: 'error', error: modelError('aborted', 'request aborted') };
            return;
          }
          const entry =
            choice === 'modelError'
              ? INJECTED_MODEL_ERROR
              : withCallIds(world.config.replies.get(choice.slice('reply '.length))!, callIndex);
          const played = scriptedModel([entry], { name, recordRequests: false }).stream(request, options);
          for await (const event of played) {
            world.touch();
            yield event;
          }
        })();
      },
    };
  }

  /** The tool with its body behind a task: it finishes (ok or, when allowed, with an error) when released. */
  tool(tool: AnyTool): AnyTool {
    const world = this;
    const choices: Choice[] = [{ name: 'ok', budgeted: false }];
    if (this.config.toolError) choices.push({ name: 'error', budgeted: true });
    return {
      ...tool,
      async execute(args, ctx): Promise<ToolOutput> {
        const choice = await world.wait('tool', ctx.toolCallId, tool.name, choices, ctx.signal);
        if (choice === ABANDONED) throw new Error(`${tool.name}: aborted`);
        if (choice === 'error') throw new Error(`${tool.name} failed (injected toolError)`);
        if (world.config.bodies === 'real') return tool.execute(args, ctx);
        return `${tool.name} ok`;
      },
    };
  }

  /** The agent's policies, each call reported (nothing may ask a policy after an abort). */
  policies(policies: Policies | undefined): Policies | undefined {
    if (!policies) return policies;
    const wrapped: Policies = {};
    for (const slot of ['preTurn', 'preDispatch', 'postTurn', 'postLoop'] as const) {
      const list = policies[slot] as Array<(ctx: never) => unknown> | undefined;
      if (!list) continue;
      (wrapped as Record<string, unknown>)[slot] = list.map((policy) => (ctx: never) => {
        this.onPolicyCall(`${slot} policy`);
        return policy(ctx);
      });
    }
    return wrapped;
  }

  /** The approval handler: each request waits for the explorer's answer. */
  approvalHandler(): ApprovalHandler {
    const choices: Choice[] = [...this.config.approvals.keys()].map((name) => ({ name, budgeted: false }));
    return async (request, { signal }) => {
      const choice = await this.wait('approval', request.toolCallId, request.toolName, choices, signal);
      if (choice === ABANDONED) return { approved: false, reason: 'withdrawn' };
      return this.config.approvals.get(choice)!;
    };
  }
}

const INJECTED_MODEL_ERROR: ScriptEntry = { error: { kind: 'network', message: 'injected modelError' } };

/** Tool-call ids unique across the session: `call_<model call>_<position>` (the alphabet's ids are not used). */
function withCallIds(entry: ScriptEntry, callIndex: number): ScriptEntry {
  if (!entry.toolCalls) return entry;
  return { ...entry, toolCalls: entry.toolCalls.map((call, index) => ({ ...call, id: `call_${callIndex}_${index}` })) };
}

/** The messages as the model got them (a later change to the history must not show through). */
function copy<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return JSON.parse(JSON.stringify(value)) as T;
  }
}
