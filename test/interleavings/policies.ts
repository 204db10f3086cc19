import type { AssistantMessage, Policies, PostTurnVerdict, PreDispatchVerdict, Verdict } from 'agentchart';
import type { PolicySpecs, VerdictSpec } from './spec.js';
import { invoked, type Gate, type WorldRecord } from './world.js';

/**
 * One policy per configured slot. Each invocation waits for the scheduler (so aborts, steering and
 * tool completions race it), then returns the slot's next scripted verdict; verdicts that do not
 * apply to the slot, and invocations beyond the script, continue.
 */

const REWRITE = { outcome: 'ok', updates: 0, honorsSignal: true };

function verdictFor(
  slot: keyof PolicySpecs,
  spec: VerdictSpec,
  label: string,
): Verdict | PreDispatchVerdict | PostTurnVerdict | { verdict: 'replace'; assistant: AssistantMessage } | 'same' {
  switch (spec) {
    case 'continue':
      return { verdict: 'continue' };
    case 'stop':
      return { verdict: 'stop', reason: `${label} stops` };
    case 'inject':
      return { verdict: 'inject', messages: [`injected by ${label}`] };
    case 'throw':
      throw new Error(`${label} threw`);
    case 'skip':
      return slot === 'preDispatch' ? { verdict: 'skip', reason: `${label} skips` } : { verdict: 'continue' };
    case 'rewrite':
      return slot === 'preDispatch' ? { verdict: 'continue', arguments: { ...REWRITE } } : { verdict: 'continue' };
    case 'replace':
      return slot === 'postTurn' ? 'same' : { verdict: 'continue' };
  }
}

export function worldPolicies(specs: PolicySpecs, gate: Gate, record: WorldRecord): Policies {
  const policies: Policies = {};
  const counters = { preTurn: 0, preDispatch: 0, postTurn: 0, postLoop: 0 };
  const next = async (slot: keyof PolicySpecs, detail: string) => {
    const index = counters[slot]++;
    const spec = specs[slot]?.[index] ?? 'continue';
    const label = `${slot} #${index}${detail}`;
    invoked(record, `${label} policy`);
    await gate(`${label} → ${spec}`);
    return verdictFor(slot, spec, label);
  };
  if (specs.preTurn) policies.preTurn = [async (ctx) => (await next('preTurn', ` (turn ${ctx.turnIndex})`)) as Verdict];
  if (specs.postLoop)
    policies.postLoop = [async (ctx) => (await next('postLoop', ` (turn ${ctx.turnIndex})`)) as Verdict];
  if (specs.preDispatch)
    policies.preDispatch = [async (ctx) => (await next('preDispatch', ` (${ctx.toolCall.id})`)) as PreDispatchVerdict];
  if (specs.postTurn) {
    policies.postTurn = [
      async (ctx) => {
        const verdict = await next('postTurn', ` (turn ${ctx.turnIndex})`);
        // A replacement with the same tool-call blocks and a different text: the accepted kind.
        if (verdict === 'same') {
          if (!ctx.assistant) return { verdict: 'continue' };
          return {
            verdict: 'replace',
            assistant: {
              ...ctx.assistant,
              content: [
                { type: 'text', text: 'replaced' },
                ...ctx.assistant.content.filter((b) => b.type === 'toolCall'),
              ],
            },
          };
        }
        return verdict as PostTurnVerdict;
      },
    ];
  }
  return policies;
}
