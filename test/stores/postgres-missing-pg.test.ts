import { describe, expect, it, vi } from 'vitest';
import { AgentError } from 'agentchart';
import { postgresStore } from 'agentchart/postgres';

// As when the optional peer is not installed: importing pg fails with Node's module-not-found code.
vi.mock('pg', () => {
  throw Object.assign(new Error("Cannot find package 'pg'"), { code: 'ERR_MODULE_NOT_FOUND' });
});

describe('agentchart/postgres without its optional peer pg', () => {
  it('the first use rejects with AgentError MissingDependency naming pg and the install command', async () => {
    const store = postgresStore({ connectionString: 'postgres://127.0.0.1:1/none' });
    const attempt = store.load('s');
    await expect(attempt).rejects.toBeInstanceOf(AgentError);
    await expect(attempt).rejects.toMatchObject({
      code: 'MissingDependency',
      message:
        'agentchart/postgres needs the optional peer dependency "pg" (8.x), which is not installed. ' +
        'Install it with: npm install pg',
    });
  });
});
