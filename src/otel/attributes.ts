/**
 * Attribute names of the GenAI semantic conventions, written as strings: their constants in
 * `@opentelemetry/semantic-conventions` are deprecated (the GenAI conventions moved to their own
 * repository), so the package is not a dependency. `agentchart.*` names are ours.
 */
export const GEN_AI = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  conversationId: 'gen_ai.conversation.id',
  requestModel: 'gen_ai.request.model',
  responseModel: 'gen_ai.response.model',
  finishReasons: 'gen_ai.response.finish_reasons',
  /** All input tokens, cached ones included (the conventions' meaning; agentchart's `usage.input` excludes them). */
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  cacheReadTokens: 'gen_ai.usage.cache_read.input_tokens',
  cacheWriteTokens: 'gen_ai.usage.cache_creation.input_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  // Content: recorded only with `captureContent: true`.
  systemInstructions: 'gen_ai.system_instructions',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  toolArguments: 'gen_ai.tool.call.arguments',
  toolResult: 'gen_ai.tool.call.result',
} as const;

export const ERROR_TYPE = 'error.type';

export const AGENTCHART = {
  runId: 'agentchart.run.id',
  runStatus: 'agentchart.run.status',
  runEndReason: 'agentchart.run.end_reason',
  /** The run continued after a restart: its agent span starts at the resumption. */
  runResumed: 'agentchart.run.resumed',
  turnIndex: 'agentchart.turn.index',
  turnEndReason: 'agentchart.turn.end_reason',
  /** false on the span of a call that got its (error) result without ever starting. */
  toolStarted: 'agentchart.tool.started',
  steeringDelivered: 'agentchart.steering.delivered',
  retryAttempt: 'agentchart.retry.attempt',
  retryDelayMs: 'agentchart.retry.delay_ms',
  fallbackFrom: 'agentchart.fallback.from',
  fallbackTo: 'agentchart.fallback.to',
  contextMessagesBefore: 'agentchart.context.messages_before',
  contextMessagesAfter: 'agentchart.context.messages_after',
  contextTokensBefore: 'agentchart.context.tokens_before',
  contextTokensAfter: 'agentchart.context.tokens_after',
  approvalApproved: 'agentchart.approval.approved',
  policySlot: 'agentchart.policy.slot',
} as const;

/** Span event names (agentchart's; the GenAI conventions define none for these). */
export const SPAN_EVENT = {
  retry: 'retry',
  modelFallback: 'model_fallback',
  steering: 'steering',
  contextCompacted: 'context_compacted',
  approvalRequested: 'tool_approval_requested',
  approvalResolved: 'tool_approval_resolved',
  policyError: 'policy_error',
} as const;

/** error.type of a tool call whose result is an error, and of a span an abort cut short. */
export const TOOL_ERROR = 'toolError';
export const ABORTED = 'aborted';
