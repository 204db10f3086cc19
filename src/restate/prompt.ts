import type { ObjectContext } from '@restatedev/restate-sdk';
import { AgentError } from '../domain/errors.js';
import type { MessageInput } from '../domain/messages.js';
import type { RunResult } from '../domain/outcomes.js';
import { createHostedAgent, type Agent } from '../runtime/agent.js';
import type { AgentOptions } from '../runtime/options.js';
import { RestateHost } from './host.js';
import { inboxClient } from './inbox.js';
import type { ActiveRun, InboxItem } from './protocol.js';
import { refusal, type RestateSdk } from './sdk.js';
import { readSession, stateStore } from './state-store.js';

export interface PromptCall {
  objectName: string;
  sessionId: string;
  agent: (sessionId: string) => AgentOptions;
  input: MessageInput | MessageInput[];
}

/**
 * One run of the session, inside the exclusive `prompt` handler. The agent is the in-process one:
 * its store is the object's state, its clock Restate's timers, its model attempts and tool calls
 * journaled steps (RestateHost). A crashed worker's invocation is replayed from the journal on
 * another worker: the same steps in the same order, so the run continues with the same runId and seq.
 */
export async function runPrompt(sdk: RestateSdk, ctx: ObjectContext, call: PromptCall): Promise<RunResult> {
  try {
    return await promptOnce(sdk, ctx, call);
  } catch (error) {
    // A refused input, invalid options, a damaged state: terminal, Restate must not retry them.
    if (error instanceof AgentError) throw refusal(sdk, error.code, error.message);
    throw error;
  }
}

async function promptOnce(sdk: RestateSdk, ctx: ObjectContext, call: PromptCall): Promise<RunResult> {
  const { sessionId } = call;
  const inbox = inboxClient(sdk, ctx, call.objectName, sessionId);
  const stored = await readSession(sessionId, ctx);
  const wake = ctx.awakeable<null>();
  const early = await inbox.open(wake.id);
  ctx.set('active', { invocationId: ctx.request().id } satisfies ActiveRun);
  const host = new RestateHost(sdk, ctx, inbox);
  try {
    const agent = createHostedAgent(
      { ...call.agent(sessionId), store: stateStore(sessionId, stored, ctx), sessionId, clock: host.clock },
      host,
    );
    const { resumedRun } = await agent.ready;
    host.onItem = (item) => apply(agent, host, item);
    host.onCancel = (reason) => agent.abort(reason);
    for (const item of early) apply(agent, host, item);
    host.listen(early.length === 0 ? wake : undefined);
    // A run stored as in flight (its invocation was killed, not crashed): it finishes first.
    if (resumedRun) await host.drive(resumedRun.result);
    const result = agent.prompt(call.input).result;
    const outcome = await host.drive(result);
    // Steering and follow-ups the run took but did not deliver stay queued in the session; what it
    // did not take stays in the inbox for the next run.
    for (const item of await host.finish()) apply(agent, host, item);
    return outcome;
  } finally {
    inbox.close();
    ctx.clear('active');
  }
}

/** Hands an item of the inbox to the agent; a steer's receipt goes back to its sender's awakeable. */
function apply(agent: Agent, host: RestateHost, item: InboxItem): void {
  switch (item.kind) {
    case 'steer':
    case 'followUp':
      void (item.kind === 'steer' ? agent.steer(item.message) : agent.followUp(item.message)).then((receipt) => {
        if (item.receipt !== '') host.resolveReceipt(item.receipt, receipt);
      });
      return;
    case 'approval':
      try {
        agent.resolveApproval(item.toolCallId, item.decision, { version: item.version });
      } catch {
        // Validated by the shared handler against the stored session; the run moved on meanwhile.
      }
      return;
    case 'abort':
      if (agent.running) agent.abort(item.reason);
      return;
  }
}
