import { describe, expect, it, vi } from 'vitest';
import { AgentError } from 'agentchart';
import { agentObject } from 'agentchart/restate';
import { scriptedModel } from 'agentchart/testing';

// As when the optional peer is not installed: importing the SDK fails with Node's module-not-found code.
vi.mock('@restatedev/restate-sdk', () => {
  throw Object.assign(new Error("Cannot find package '@restatedev/restate-sdk'"), { code: 'ERR_MODULE_NOT_FOUND' });
});

describe('agentchart/restate without its optional peer', () => {
  it('agentObject throws AgentError MissingDependency naming the package and the install command', () => {
    let error: unknown = null;
    try {
      agentObject({ name: 'Agent', agent: () => ({ model: scriptedModel([]) }) });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(AgentError);
    expect(error).toMatchObject({ code: 'MissingDependency' });
    expect((error as Error).message).toBe(
      'agentchart/restate needs the optional peer dependency "@restatedev/restate-sdk" (^1.17), which is not ' +
        'installed. Install it with: npm install @restatedev/restate-sdk',
    );
  });
});
