import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The root entry point is what an application author uses, and nothing more: kits for store, model
 * adapter and trace authors live on their subpaths. This list is pinned so that a new root export is a
 * decision made in review (add it here), not a side effect of an `export *`.
 */
const VALUES = [
  'AgentError',
  'INTERRUPTED_BY_RESTART',
  'TOOL_SOURCE',
  'checkToolParity',
  'compactMessages',
  'createAgent',
  'defineTool',
  'forkSession',
  'jsonSchemaParameters',
  'memoryStore',
  'textOf',
  'toolCallsOf',
];

const TYPES = [
  'Agent',
  'AgentErrorCode',
  'AgentEvent',
  'AgentEventOf',
  'AgentEventType',
  'AgentObserver',
  'AgentOptions',
  'AgentRun',
  'AgentSnapshot',
  'AnyTool',
  'ApprovalDecision',
  'ApprovalHandler',
  'ApprovalMode',
  'ApprovalRequest',
  'AssistantBlock',
  'AssistantMessage',
  'CompactOptions',
  'ContextTransform',
  'Counters',
  'CustomMessage',
  'DurableOptions',
  'ElicitationAnswer',
  'ElicitationRequest',
  'EndReason',
  'FinalReport',
  'ForkOptions',
  'ForkResult',
  'JsonSchemaCheck',
  'JsonSchemaTool',
  'LoopPolicyContext',
  'Message',
  'MessageInput',
  'Model',
  'ModelRequest',
  'ModelStreamEvent',
  'ObservedAgent',
  'PendingApproval',
  'Policies',
  'PostLoopPolicy',
  'PostTurnContext',
  'PostTurnPolicy',
  'PostTurnVerdict',
  'PreDispatchContext',
  'PreDispatchPolicy',
  'PreDispatchVerdict',
  'PreTurnPolicy',
  'RetryOptions',
  'RunResult',
  'RunStatus',
  'SessionStore',
  'SessionSummary',
  'StandardIssue',
  'SteerReceipt',
  'TimeoutOptions',
  'Tool',
  'ToolArguments',
  'ToolCallBlock',
  'ToolContext',
  'ToolExecution',
  'ToolOutput',
  'ToolParameters',
  'ToolResultMessage',
  'ToolSource',
  'Usage',
  'UserMessage',
  'Verdict',
];

/** Every name src/index.ts exports, types included, as the TypeScript compiler resolves them. */
function exportedNames(file: string): string[] {
  const program = ts.createProgram([file], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(file)!);
  if (!module) throw new Error(`${file} is not a module`);
  return checker.getExportsOfModule(module).map((symbol) => symbol.name);
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

describe('the root entry point', () => {
  it('exports exactly the pinned values', async () => {
    expect(Object.keys(await import('agentchart')).sort(byName)).toEqual(VALUES);
  });

  it('exports exactly the pinned types, and no more than 80 names in all', () => {
    const names = exportedNames(fileURLToPath(new URL('../../src/index.ts', import.meta.url)));
    const types = names.filter((name) => !VALUES.includes(name)).sort(byName);
    expect(types).toEqual(TYPES);
    expect(names.length).toBe(VALUES.length + TYPES.length);
    expect(names.length).toBeLessThanOrEqual(80);
  });
});
