import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

describe('npm run demo -- --otel', () => {
  it("prints the session's spans after the transcript (ConsoleSpanExporter) and exits 0", () => {
    const demo = spawnSync(process.execPath, ['--import', 'tsx', 'src/demo/main.ts', '--offline', '--otel'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 40_000,
      env: { ...process.env, NO_COLOR: '1' },
    });
    expect(demo.stderr).toBe('');
    expect(demo.status).toBe(0);
    const [transcript, spans] = demo.stdout.split('OpenTelemetry spans (ConsoleSpanExporter');
    expect(transcript).toContain('▶ run started');
    const names = [...(spans ?? '').matchAll(/^ {2}name: '([^']+)',$/gm)].map((match) => match[1]);
    // Children end (and are exported) before their parents: the agent span comes last.
    expect(names.at(-1)).toBe('invoke_agent demo-coder');
    expect(names.sort()).toEqual([
      ...Array(4).fill('chat scripted-coder'),
      'execute_tool grep',
      'execute_tool read_file',
      'execute_tool run_tests',
      'execute_tool run_tests',
      'execute_tool write_file',
      'invoke_agent demo-coder',
      ...Array(4).fill('turn'),
    ]);
    expect(spans).toContain("name: 'steering'");
    expect(spans).toContain("name: 'tool_approval_resolved'");
  });
});
