/** What `approvalsAnswered` reads of a chat's messages: any `UIMessage` fits. */
export interface ChatMessagesLike {
  messages: ReadonlyArray<{ role: string; parts: ReadonlyArray<object> }>;
}

/**
 * `useChat`'s `sendAutomaticallyWhen` for an agentchart server: sends the assistant message back
 * once the user has answered every approval request in it. The AI SDK's own
 * `lastAssistantMessageIsCompleteWithApprovalResponses` also waits for the step's other calls to
 * have results; agentchart runs a batch's calls only after its approvals are decided, so at that
 * point those calls are still waiting.
 */
export function approvalsAnswered({ messages }: ChatMessagesLike): boolean {
  const last = messages.at(-1);
  if (last?.role !== 'assistant') return false;
  const states = last.parts.flatMap((part) => {
    const { state, approval } = part as { state?: unknown; approval?: unknown };
    return approval ? [state] : [];
  });
  return states.includes('approval-responded') && !states.includes('approval-requested');
}
