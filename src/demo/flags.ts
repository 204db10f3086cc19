/**
 * The demo's command-line flags, in one table: `--help` prints it and any other argument is an
 * error. A new flag is one row here plus its handling where its feature lives.
 */
export interface DemoFlag {
  name: `--${string}`;
  /** The value's placeholder for flags that take one (`--trace FILE` or `--trace=FILE`). */
  value?: string;
  help: string;
}

export const DEMO_FLAGS: readonly DemoFlag[] = [
  { name: '--offline', help: 'play the scripted session even when a provider is configured' },
  { name: '--inspect', help: 'open the XState inspector on a loopback-only relay' },
  { name: '--inspect-port', value: 'PORT', help: 'the relay port (implies --inspect; default: any free port)' },
  { name: '--trace', value: 'FILE', help: 'write the trace as JSON lines to FILE and a viewer page beside it' },
  { name: '--otel', help: "print the session's OpenTelemetry spans after the transcript" },
  { name: '--studio', help: 'show the session in the studio (live charts, approve on the page, rewind and fork)' },
  { name: '--studio-port', value: 'PORT', help: 'the studio port (implies --studio; default: any free port)' },
  { name: '--help', help: 'print this help and exit' },
];

export class DemoUsageError extends Error {
  override readonly name = 'DemoUsageError';
}

/**
 * Checks every argument against the table. Returns whether help was asked for; throws a
 * `DemoUsageError` naming an unknown flag or a stray argument.
 */
export function checkDemoArgs(argv: readonly string[], flags: readonly DemoFlag[] = DEMO_FLAGS): { help: boolean } {
  let help = false;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), true] : [arg, false];
    const flag = flags.find((candidate) => candidate.name === name);
    if (!flag) {
      throw new DemoUsageError(
        arg.startsWith('-') ? `unknown flag ${name}` : `unexpected argument ${JSON.stringify(arg)}`,
      );
    }
    if (flag.value === undefined && inline) throw new DemoUsageError(`${flag.name} takes no value, got "${arg}"`);
    if (flag.value !== undefined && !inline) index++; // its value is the next argument (checked by its parser)
    if (flag.name === '--help') help = true;
  }
  return { help };
}

/** The usage text `--help` prints. */
export function demoHelp(flags: readonly DemoFlag[] = DEMO_FLAGS): string {
  const left = flags.map((flag) => (flag.value ? `${flag.name} ${flag.value}` : flag.name));
  const width = Math.max(...left.map((text) => text.length));
  return [
    'Usage: npm run demo -- [flags]',
    '',
    'Plays an agent session: offline on a scripted model, or on a real model when OPENAI_BASE_URL,',
    'OPENAI_API_KEY or ANTHROPIC_API_KEY is set (models: OPENAI_MODEL, ANTHROPIC_MODEL).',
    '',
    'Flags:',
    ...flags.map((flag, index) => `  ${(left[index] ?? '').padEnd(width)}  ${flag.help}`),
    '',
  ].join('\n');
}
