import type { ApprovalDecision } from '../policies/types.js';
import type { McpElicitParams, McpElicitResult } from './sdk.js';
import type { McpElicitationHandler } from './types.js';

/**
 * Answers a server's elicitation request with the toolset's handler, in the vocabulary of
 * approvals. No handler, a URL-mode request (a browser flow agentchart cannot open), a throw or an
 * invalid decision: declined, so the server's tool result says so.
 */
export async function answerElicitation(
  handler: McpElicitationHandler | undefined,
  params: McpElicitParams,
  context: { server: string; call: { toolCallId: string; toolName: string } | undefined; signal: AbortSignal },
): Promise<McpElicitResult> {
  if (!handler || params.mode === 'url') return { action: 'decline' };
  let decision: ApprovalDecision;
  try {
    decision = await handler(
      {
        server: context.server,
        message: params.message,
        requestedSchema: params.requestedSchema as Record<string, unknown>,
        ...(context.call ?? {}),
      },
      { signal: context.signal },
    );
  } catch {
    return { action: 'decline' };
  }
  if (typeof decision !== 'object' || decision === null || decision.approved !== true) return { action: 'decline' };
  const content = 'arguments' in decision && isRecord(decision.arguments) ? decision.arguments : {};
  return { action: 'accept', content: content as NonNullable<McpElicitResult['content']> };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
