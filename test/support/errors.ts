import { expect } from 'vitest';
import { AgentError, type AgentErrorCode } from 'agentchart';

/** The message of the `AgentError` with this code that `run` throws; fails the test if it throws anything else. */
export function agentErrorMessage(code: AgentErrorCode, run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(AgentError);
    expect((error as AgentError).code).toBe(code);
    return (error as AgentError).message;
  }
  throw new Error(`expected an AgentError(${code})`);
}
