import { describe, expect, it } from 'vitest';
import { masterMachine } from '../../machines/master.machine.js';
import { toolCallMachine } from '../../machines/tool-call.machine.js';
import { turnMachine } from '../../machines/turn.machine.js';

/** The machines name their effects; one the runtime forgot to provide says which, and of which machine. */

type Effect = (args?: unknown, params?: unknown) => unknown;
const effect = (implementations: Record<string, unknown>, name: string) => implementations[name] as Effect;

describe('effects the runtime did not provide', () => {
  it('throw an error naming the machine and the effect', () => {
    expect(() => effect(masterMachine.implementations.actions, 'announceAgentStart')()).toThrow(
      `agentchart: the runtime must provide the master machine's "announceAgentStart"`,
    );
    expect(() =>
      effect(turnMachine.implementations.actions, 'announceApprovalResolved')({}, { approved: true }),
    ).toThrow(`agentchart: the runtime must provide the turn machine's "announceApprovalResolved"`);
    expect(() => effect(toolCallMachine.implementations.actions, 'announceExecutionStart')()).toThrow(
      `agentchart: the runtime must provide the tool-call machine's "announceExecutionStart"`,
    );
  });
});
