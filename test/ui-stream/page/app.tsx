import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { useState } from 'react';
import { createRoot } from 'react-dom/client';
import type { AgentchartUIMessage } from 'agentchart/ai-sdk-ui';
import { approvalsAnswered } from 'agentchart/ai-sdk-ui-client';

// A small chat page as an application writes it with useChat, bundled by the browser test with
// esbuild and served by chatHandler behind node:http. The conversation is loaded from the server
// (GET), so a reload shows what the durable session holds.

type Part = AgentchartUIMessage['parts'][number];

function PartView({ part, answer }: { part: Part; answer: (id: string, approved: boolean) => void }) {
  if (part.type === 'text') return <p className="text">{part.text}</p>;
  if (!part.type.startsWith('tool-') || !('toolCallId' in part)) return null;
  return (
    <div className="tool" data-tool={part.type.slice('tool-'.length)} data-state={part.state}>
      <code className="input">{JSON.stringify(part.input ?? {})}</code>
      {part.state === 'output-available' ? <span className="output">{String(part.output)}</span> : null}
      {part.state === 'output-error' ? <span className="error">{part.errorText}</span> : null}
      {part.state === 'approval-requested' && !part.approval.isAutomatic ? (
        <span className="approval">
          <button className="approve" onClick={() => answer(part.approval.id, true)}>
            Approve
          </button>
          <button className="deny" onClick={() => answer(part.approval.id, false)}>
            Deny
          </button>
        </span>
      ) : null}
    </div>
  );
}

function Chat({ id, initial }: { id: string; initial: AgentchartUIMessage[] }) {
  const { messages, sendMessage, status, stop, addToolApprovalResponse } = useChat<AgentchartUIMessage>({
    id,
    messages: initial,
    transport: new DefaultChatTransport({ api: '/api/chat' }),
    sendAutomaticallyWhen: approvalsAnswered,
  });
  const [input, setInput] = useState('');
  const answer = (approvalId: string, approved: boolean) => void addToolApprovalResponse({ id: approvalId, approved });
  return (
    <main>
      <ol id="messages">
        {messages.map((message) => (
          <li
            key={message.id}
            className="message"
            data-role={message.role}
            data-status={message.metadata?.status ?? ''}
          >
            {message.parts.map((part, index) => (
              <PartView key={index} part={part} answer={answer} />
            ))}
          </li>
        ))}
      </ol>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void sendMessage({ text: input });
          setInput('');
        }}
      >
        <input id="input" value={input} onChange={(event) => setInput(event.target.value)} />
        <button id="send" type="submit">
          Send
        </button>
        {status === 'streaming' || status === 'submitted' ? (
          <button id="stop" type="button" onClick={() => void stop()}>
            Stop
          </button>
        ) : null}
      </form>
      <p id="status">{status}</p>
    </main>
  );
}

const id = new URLSearchParams(location.search).get('chat') ?? 'chat';
const initial = (await (await fetch(`/api/chat?id=${encodeURIComponent(id)}`)).json()) as AgentchartUIMessage[];
createRoot(document.getElementById('root') as HTMLElement).render(<Chat id={id} initial={initial} />);
