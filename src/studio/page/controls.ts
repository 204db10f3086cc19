import type { PendingApproval } from '../../store/types.js';
import type { ControlCommand, ControlResponse } from '../protocol.js';
import { clockTime, h, pretty } from './dom.js';

/**
 * The page's controls: pending approvals (approve, deny, approve with edited arguments), steer,
 * follow up, prompt and abort. Each is one call of the agent's public API on the server; what it
 * answered (a receipt, a version, a typed error) is written in the receipts list.
 */

export type Send = (request: ControlCommand) => Promise<ControlResponse>;

export class ApprovalCards {
  private drawn = '';

  constructor(
    private readonly container: HTMLElement,
    private readonly send: Send,
    private readonly receipt: (text: string, response: ControlResponse) => void,
  ) {}

  /** Redrawn only when the approvals changed: what a person typed into an open card stays. */
  render(approvals: readonly PendingApproval[], enabled: boolean): void {
    const key = `${enabled}:${JSON.stringify(approvals)}`;
    if (key === this.drawn) return;
    this.drawn = key;
    this.container.replaceChildren(...approvals.map((approval) => this.card(approval, enabled)));
  }

  private card(approval: PendingApproval, enabled: boolean): HTMLElement {
    const args = h('textarea', {
      class: 'approval-args',
      rows: 4,
      spellcheck: 'false',
      disabled: !enabled,
    }) as HTMLTextAreaElement;
    args.value = pretty(approval.arguments, 100_000);
    const reason = h('input', {
      class: 'approval-reason',
      placeholder: 'reason (for a denial)',
      disabled: !enabled,
    }) as HTMLInputElement;
    const problem = h('div', { class: 'problem', role: 'alert' });
    const button = (label: string, action: 'approve' | 'deny' | 'approveWith', className: string) => {
      const element = h(
        'button',
        { type: 'button', class: className, disabled: !enabled, 'data-action': action },
        label,
      );
      element.addEventListener('click', () => {
        let edited: Record<string, unknown> | undefined;
        if (action === 'approveWith') {
          try {
            edited = JSON.parse(args.value) as Record<string, unknown>;
          } catch (error) {
            problem.textContent = `The arguments are not valid JSON: ${(error as Error).message}`;
            return;
          }
        }
        problem.textContent = '';
        const request = {
          action,
          toolCallId: approval.toolCallId,
          version: approval.version,
          ...(edited ? { arguments: edited } : {}),
          ...(action === 'deny' && reason.value !== '' ? { reason: reason.value } : {}),
        };
        for (const other of Array.from(this.container.querySelectorAll('button')))
          (other as HTMLButtonElement).disabled = true;
        void this.send(request).then((response) => {
          this.receipt(`${action} ${approval.toolName} ${approval.toolCallId} (version ${approval.version})`, response);
          if (!response.ok) {
            problem.textContent = `${response.code}: ${response.message}`;
            this.drawn = '';
          }
        });
      });
      return element;
    };
    return h(
      'div',
      { class: 'approval', 'data-tool-call-id': approval.toolCallId, 'data-version': approval.version },
      h(
        'div',
        { class: 'approval-head' },
        h('strong', {}, approval.elicitation ? 'Question from ' : 'Approve '),
        h('span', { class: 'tool-name' }, approval.toolName),
        h('span', { class: 'tool-id' }, approval.toolCallId),
        h('span', { class: 'version' }, `version ${approval.version}`),
      ),
      approval.elicitation ? h('p', { class: 'elicitation' }, approval.elicitation.message) : null,
      args,
      h(
        'div',
        { class: 'approval-buttons' },
        button('Approve', 'approve', 'approve'),
        button('Approve with these arguments', 'approveWith', 'approve-with'),
        reason,
        button('Deny', 'deny', 'deny'),
      ),
      problem,
    );
  }
}

/** One line per control used: what was asked, what the API answered. */
export function addReceipt(list: HTMLElement, what: string, response: ControlResponse): HTMLElement {
  let answer: string;
  if (!response.ok) answer = `refused: ${response.code} — ${response.message}`;
  else if (response.receipt)
    answer =
      response.receipt.status === 'delivered'
        ? `delivered in turn ${response.receipt.turnIndex}`
        : 'still queued (the run ended first)';
  else if (response.runId) answer = `run ${response.runId} started`;
  else answer = response.version !== undefined ? `done (version ${response.version})` : 'done';
  const item = h(
    'li',
    { class: `receipt${response.ok ? '' : ' refused'}`, 'data-ok': String(response.ok) },
    h('span', { class: 'time' }, clockTime(Date.now())),
    ` ${what} → `,
    h('span', { class: 'answer' }, answer),
  );
  list.prepend(item);
  return item;
}
