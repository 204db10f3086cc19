// The demo's pretend repository: in memory, so the demo (and a real model driving it) never touches disk.

export const PARSER_PATH = 'src/parser.ts';

const BUGGY_PARSER = `export function parseConfig(text: string): Record<string, string> {
  const config: Record<string, string> = {};
  for (const line of text.split('\\n')) {
    const [key, value] = line.split('=');
    config[key.trim()] = value.trim();
  }
  return config;
}
`;

export const FIXED_PARSER = `export function parseConfig(text: string): Record<string, string> {
  const config: Record<string, string> = {};
  for (const line of text.split('\\n')) {
    // Blank lines (and empty input) carry no setting.
    if (line.trim() === '') continue;
    const [key, value = ''] = line.split('=');
    config[key.trim()] = value.trim();
  }
  return config;
}
`;

const INITIAL_FILES: Record<string, string> = {
  [PARSER_PATH]: BUGGY_PARSER,
  'src/cli.ts': `import { readFileSync } from 'node:fs';
import { parseConfig } from './parser.js';

export const loadConfig = (path: string) => parseConfig(readFileSync(path, 'utf8'));
`,
  'src/server.ts': `import { parseConfig } from './parser.js';

export const configFromEnv = () => parseConfig(process.env.APP_CONFIG ?? '');
`,
  'test/parser.test.ts': `import { parseConfig } from '../src/parser.js';

test('parses key=value lines', () => expect(parseConfig('a=1\\nb=2')).toEqual({ a: '1', b: '2' }));
test('parses empty input', () => expect(parseConfig('')).toEqual({}));
`,
};

export interface GrepMatch {
  path: string;
  line: number;
  text: string;
}

export class Workspace {
  private readonly files = new Map(Object.entries(INITIAL_FILES));

  paths(): string[] {
    return [...this.files.keys()].sort();
  }

  read(path: string): string | undefined {
    return this.files.get(path);
  }

  write(path: string, content: string): void {
    this.files.set(path, content);
  }

  grep(pattern: string, path: string): GrepMatch[] {
    const matches: GrepMatch[] = [];
    for (const file of this.paths().filter((candidate) => candidate.startsWith(path))) {
      const lines = (this.files.get(file) ?? '').split('\n');
      lines.forEach((text, index) => {
        if (text.includes(pattern)) matches.push({ path: file, line: index + 1, text: text.trim() });
      });
    }
    return matches;
  }

  /** The simulated test runner cannot execute TypeScript: any edit of the buggy parser counts as the fix. */
  parserFixed(): boolean {
    return this.files.get(PARSER_PATH) !== BUGGY_PARSER;
  }
}
