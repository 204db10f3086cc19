import { AbstractChat, DefaultChatTransport, type ChatInit, type ChatState, type ChatStatus } from 'ai';
import type { AgentchartUIMessage, ChatRequestHandler } from 'agentchart/ai-sdk-ui';
import { settle } from '../support/harness.js';

/** The state useChat keeps in React, kept in plain fields: the AI SDK's own Chat runs on it unchanged. */
class PlainChatState implements ChatState<AgentchartUIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  constructor(public messages: AgentchartUIMessage[]) {}
  pushMessage = (message: AgentchartUIMessage) => void (this.messages = [...this.messages, message]);
  popMessage = () => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: AgentchartUIMessage) =>
    void (this.messages = this.messages.map((old, at) => (at === index ? message : old)));
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** What the docs tell a page to pass as `sendAutomaticallyWhen`. */
export { approvalsAnswered } from 'agentchart/ai-sdk-ui-client';

/** The AI SDK's Chat (what useChat wraps) talking to a chat handler through the default HTTP transport. */
export class NodeChat extends AbstractChat<AgentchartUIMessage> {
  readonly requests: Array<{ method: string; body: unknown; status: number }> = [];
  readonly errors: Error[] = [];

  constructor(
    handler: ChatRequestHandler,
    init: Omit<ChatInit<AgentchartUIMessage>, 'transport'> & { messages?: AgentchartUIMessage[] } = {},
  ) {
    const requests: NodeChat['requests'] = [];
    const errors: Error[] = [];
    const transport = new DefaultChatTransport<AgentchartUIMessage>({
      api: 'http://127.0.0.1/api/chat',
      fetch: async (input, requestInit) => {
        const request = new Request(input, requestInit);
        const body: unknown = await request.clone().json();
        const response = await handler(request);
        requests.push({ method: request.method, body, status: response.status });
        return response;
      },
    });
    super({
      ...init,
      transport,
      onError: (error) => errors.push(error),
      state: new PlainChatState(init.messages ?? []),
    });
    this.requests = requests;
    this.errors = errors;
  }

  /** Waits until the chat is idle and the page would show `ready`. */
  async idle(): Promise<void> {
    for (let turn = 0; turn < 400 && this.status !== 'ready' && this.status !== 'error'; turn++) await settle(2);
    await settle();
  }
}

/** Polls (on real macrotask turns) until `condition` holds; fails after many turns. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 2000; turn++) {
    if (condition()) return;
    await settle(1);
  }
  throw new Error(`timed out waiting until ${what}`);
}
