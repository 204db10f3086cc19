import { z } from 'zod';
import {
  defineTool,
  toolCallsOf,
  type AgentEvent,
  type AgentOptions,
  type Message,
  type PostTurnPolicy,
  type PreDispatchPolicy,
} from 'agentchart';
import { scriptedModel, type PathInfo } from 'agentchart/testing';

/**
 * Small user agents for the explorer's tests: a deploy tool behind an approval, a report-mode agent,
 * and the planted bugs a user could write into their configuration.
 */

/** The model is replaced by the explorer's alphabet; any model will do here. */
export const anyModel = () => scriptedModel([], { name: 'model' });

export const deploy = defineTool({
  name: 'deploy',
  description: 'Deploys the app.',
  parameters: z.object({ env: z.enum(['staging', 'prod']) }),
  requiresApproval: true,
  execute: ({ env }) => `deployed to ${env}`,
});

export const readLogs = defineTool({
  name: 'read_logs',
  description: 'Reads the logs.',
  parameters: z.object({}),
  execute: () => 'all quiet',
});

export const DEPLOY_REPLIES = {
  deploy: { toolCalls: [{ name: 'deploy', arguments: { env: 'prod' } }] },
  logs: { toolCalls: [{ name: 'read_logs', arguments: {} }] },
  done: { text: 'Deployed.' },
};

/**
 * Planted: a declined call is put back in front of the model, as an assistant tool call with no
 * result. The runtime refuses such an injection (a policyError, the history keeps its parity);
 * `policiesNeverRefused` is the property that finds the policy.
 */
export const reinjectDeclined: PostTurnPolicy = ({ assistant, toolResults }) => {
  const declined = toolResults.find((result) => result.isError && result.content.startsWith('rejected'));
  const call = declined && assistant ? toolCallsOf(assistant).find((c) => c.id === declined.toolCallId) : undefined;
  if (!call) return { verdict: 'continue' };
  const again: Message = { role: 'assistant', content: [{ ...call, id: `${call.id}_again` }], stopReason: 'toolUse' };
  return { verdict: 'inject', messages: [again] };
};

/** No policy verdict or approval decision of the user's was refused (no policyError on the path). */
export function policiesNeverRefused(log: readonly AgentEvent[]): string | void {
  const refused = log.find((event) => event.type === 'policyError');
  if (refused?.type === 'policyError') return `${refused.slot} policy refused: ${refused.message}`;
}

/** Planted: every deploy is pinned to production, also after a human approved another environment. */
export const pinToProd: PreDispatchPolicy = ({ toolCall }) =>
  toolCall.name === 'deploy' ? { verdict: 'continue', arguments: { env: 'prod' } } : { verdict: 'continue' };

export const deployAgent = (policies: AgentOptions['policies'] = {}): AgentOptions => ({
  model: anyModel(),
  tools: [deploy, readLogs],
  policies,
});

/** Every deploy that starts runs with the arguments a human approved (those asked about, or those given with the approval). */
export function deploysRunAsApproved(
  log: readonly AgentEvent[],
  _messages: readonly Message[],
  { steps }: PathInfo,
): string | void {
  for (const start of log) {
    if (start.type !== 'toolExecutionStart' || start.toolName !== 'deploy') continue;
    const asked = log.find((e) => e.type === 'toolApprovalRequested' && e.toolCallId === start.toolCallId);
    const answer = steps.find((step) => step.kind === 'approval' && step.toolCallId === start.toolCallId);
    if (asked?.type !== 'toolApprovalRequested' || answer?.kind !== 'approval' || !answer.value.approved) {
      return `deploy ${start.toolCallId} ran without an approval`;
    }
    const approved = 'arguments' in answer.value ? answer.value.arguments : asked.arguments;
    if (JSON.stringify(approved) !== JSON.stringify(start.arguments)) {
      return `deploy ${start.toolCallId} ran with ${JSON.stringify(start.arguments)}, approved: ${JSON.stringify(approved)}`;
    }
  }
}

export const search = defineTool({
  name: 'search',
  description: 'Searches.',
  parameters: z.object({ q: z.string() }),
  execute: () => 'found',
});

/**
 * A report-mode agent; `progressSearch` plants the bug of a working tool marked as a progress tool
 * (a turn that only ran it is discarded as a turn without work). `progressReport` marks the report
 * tool itself, which createAgent refuses.
 */
export function reportAgent(progressSearch: boolean, progressReport = false): AgentOptions {
  const report = defineTool({
    name: 'report',
    description: 'Sends the final report.',
    parameters: z.object({ summary: z.string() }),
    progress: progressReport,
    execute: () => 'report filed',
  });
  const searching = progressSearch ? defineTool({ ...search, progress: true }) : search;
  return { model: anyModel(), tools: [searching, report], finalReport: { toolName: 'report' } };
}

export const REPORT_REPLIES = {
  search: { toolCalls: [{ name: 'search', arguments: { q: 'status' } }] },
  report: { toolCalls: [{ name: 'report', arguments: { summary: 'all green' } }] },
  text: { text: 'Still looking.' },
};

/** Whatever ran stays in the model's context: every started tool call is in the history with its result. */
export function whatRanStaysInHistory(log: readonly AgentEvent[], messages: readonly Message[]): string | void {
  const calls = new Set(messages.flatMap((m) => (m.role === 'assistant' ? toolCallsOf(m).map((c) => c.id) : [])));
  const results = new Set(messages.flatMap((m) => (m.role === 'toolResult' ? [m.toolCallId] : [])));
  for (const event of log) {
    if (event.type !== 'toolExecutionStart') continue;
    if (!calls.has(event.toolCallId) || !results.has(event.toolCallId))
      return `${event.toolName} ${event.toolCallId} ran but is not in the history`;
  }
}
