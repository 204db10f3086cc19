import { TOOL_NAME_PATTERN } from '../tools/define.js';

const MAX_NAME = 64;

/** A name reduced to the characters providers accept: each run of others becomes one "_". */
export function reduceName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
}

/** The server's reported name as a prefix; "mcp" when nothing usable is left. */
export function prefixFromServerName(serverName: string | undefined): string {
  const reduced = reduceName(serverName ?? '').slice(0, 32);
  return reduced === '' ? 'mcp' : reduced;
}

/**
 * `<prefix>__<tool>`, the tool's name reduced the same way. A name past 64 characters keeps its
 * start and ends with a short hash of the server's name for it, so it stays unique.
 */
export function agentToolName(prefix: string, remoteName: string): string {
  const name = `${prefix}__${reduceName(remoteName) || 'tool'}`;
  if (name.length <= MAX_NAME && TOOL_NAME_PATTERN.test(name)) return name;
  const hash = fnv1a(remoteName);
  return `${name.slice(0, MAX_NAME - hash.length - 1)}_${hash}`;
}

function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36);
}

/** MCP tool annotations as an approval default: destructive → ask; read-only → don't; else the agent's default (no). */
export function approvalFromAnnotations(
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean } | undefined,
): boolean {
  if (annotations?.readOnlyHint === true) return false;
  return annotations?.destructiveHint === true;
}
