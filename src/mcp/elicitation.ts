import type { ApprovalDecision } from '../policies/types.js';
import type { ToolContext } from '../tools/types.js';
import type { McpElicitParams, McpElicitResult } from './sdk.js';
import type { McpElicitationHandler } from './types.js';

/** The call a request arrived during: the only one of this toolset in flight. */
export interface ElicitingCall {
  toolCallId: string;
  toolName: string;
  ctx: ToolContext;
}

/**
 * Routes a server's elicitation request: the toolset's own handler when it has one (an override);
 * else the agent's approval path through the call it arrived during (`ctx.elicit`); else, or for
 * a URL-mode request (a browser flow agentchart cannot open), declined.
 */
export function routeElicitation(
  handler: McpElicitationHandler | undefined,
  params: McpElicitParams,
  context: { server: string; call: ElicitingCall | undefined; signal: AbortSignal },
): Promise<McpElicitResult> {
  const { call } = context;
  if (handler || params.mode === 'url' || !call?.ctx.elicit) {
    const named = call ? { toolCallId: call.toolCallId, toolName: call.toolName } : undefined;
    return answerElicitation(handler, params, { ...context, call: named });
  }
  const request = {
    server: context.server,
    message: params.message,
    requestedSchema: params.requestedSchema as Record<string, unknown>,
  };
  return call.ctx
    .elicit(request)
    .then((answer) =>
      answer.action === 'accept'
        ? { action: 'accept', content: answer.content as NonNullable<McpElicitResult['content']> }
        : { action: answer.action },
    );
}

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
