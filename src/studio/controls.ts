import { AgentError } from '../domain/errors.js';
import type { ApprovalDecision } from '../policies/types.js';
import type { LiveSession } from './live-session.js';
import type { ControlRequest, ControlResponse } from './protocol.js';

/**
 * A control of the page, done through the agent's public API exactly as a program would: prompt,
 * steer and followUp (their receipts), abort, resolveApproval (with the version the page was shown).
 * A refusal comes back as the API's typed error.
 */
export async function control(session: LiveSession, request: ControlRequest): Promise<ControlResponse> {
  const { agent } = session;
  try {
    switch (request.action) {
      case 'prompt':
        return { ok: true, runId: agent.prompt(text(request.text)).runId };
      case 'steer':
        return { ok: true, receipt: await agent.steer(text(request.text)) };
      case 'followUp':
        return { ok: true, receipt: await agent.followUp(text(request.text)) };
      case 'abort':
        agent.abort(request.reason ?? 'aborted from the studio');
        return { ok: true };
      case 'approve':
      case 'approveWith':
      case 'deny': {
        const decision: ApprovalDecision =
          request.action === 'deny'
            ? { approved: false, ...(request.reason ? { reason: request.reason } : {}) }
            : request.action === 'approveWith'
              ? { approved: true, arguments: request.arguments ?? {} }
              : { approved: true };
        agent.resolveApproval(request.toolCallId, decision, { version: request.version });
        return { ok: true, version: request.version };
      }
      default:
        return {
          ok: false,
          code: 'InvalidInput',
          message: `unknown action ${JSON.stringify((request as { action?: unknown }).action)}`,
        };
    }
  } catch (error) {
    if (error instanceof AgentError) return { ok: false, code: error.code, message: error.message };
    throw error;
  }
}

function text(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new AgentError('InvalidInput', 'the message is empty');
  return value;
}
