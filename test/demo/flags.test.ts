import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkDemoArgs, DEMO_FLAGS, demoHelp, DemoUsageError } from '../../src/demo/flags.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function demoProcess(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/demo/main.ts', ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
    timeout: 30_000,
  });
}

describe('demo flags', () => {
  it('accepts every flag of the table, with values as the next argument or after =', () => {
    expect(checkDemoArgs([])).toEqual({ help: false });
    expect(checkDemoArgs(['--offline', '--inspect', '--inspect-port=9000', '--trace', 'out.jsonl'])).toEqual({
      help: false,
    });
    expect(checkDemoArgs(['--trace=out.jsonl', '--help'])).toEqual({ help: true });
  });

  it.each([
    [['--bogus'], 'unknown flag --bogus'],
    [['--offline', '--tarce', 'x.jsonl'], 'unknown flag --tarce'],
    [['--nope=1'], 'unknown flag --nope'],
    [['-h'], 'unknown flag -h'],
    [['offline'], 'unexpected argument "offline"'],
    [['--offline=yes'], '--offline takes no value, got "--offline=yes"'],
  ])('rejects %j', (argv, message) => {
    expect(() => checkDemoArgs(argv)).toThrow(new DemoUsageError(message));
  });

  it('prints one line per flag, values shown, descriptions aligned', () => {
    const help = demoHelp();
    for (const flag of DEMO_FLAGS)
      expect(help).toContain(`  ${flag.value ? `${flag.name} ${flag.value}` : flag.name} `);
    const columns = help
      .split('\n')
      .filter((line) => line.startsWith('  --'))
      .map((line) => line.search(/\S+(?: \S+)*$/));
    expect(columns).toHaveLength(DEMO_FLAGS.length);
    expect(new Set(columns).size).toBe(1);
  });

  it('npm run demo -- --help prints the flags and exits 0; an unknown flag is an error with exit code 2', () => {
    const help = demoProcess(['--help']);
    expect([help.status, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toBe(demoHelp());

    const unknown = demoProcess(['--offline', '--verbose']);
    expect(unknown.status).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toBe('agentchart demo: unknown flag --verbose (npm run demo -- --help lists the flags)\n');
  });
});
