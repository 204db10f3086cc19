import { AgentError } from '../domain/errors.js';
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
  const name = baseName(prefix, remoteName);
  return name.length <= MAX_NAME && TOOL_NAME_PATTERN.test(name) ? name : hashed(name, remoteName);
}

/**
 * The agent's names for all the tools of one list, by the server's name. Tools whose names reduce to
 * the same one (`a.b` and `a_b` both give `srv__a_b`) are all renamed `<prefix>__<tool>_<hash of the
 * server's name>`: none is dropped, and a name never passes to the other tool when the server
 * reorders its list. Throws `AgentError('McpToolConflict')` naming both when names still collide
 * (the server lists one name twice).
 */
export function agentToolNames(prefix: string, remoteNames: readonly string[]): Map<string, string> {
  const byBase = new Map<string, string[]>();
  for (const remote of remoteNames) {
    const base = agentToolName(prefix, remote);
    byBase.set(base, [...(byBase.get(base) ?? []), remote]);
  }
  const names = new Map<string, string>();
  const owners = new Map<string, string>();
  for (const [base, remotes] of byBase) {
    for (const remote of remotes) {
      const name = remotes.length === 1 ? base : hashed(baseName(prefix, remote), remote);
      const owner = owners.get(name);
      if (owner !== undefined) {
        throw new AgentError(
          'McpToolConflict',
          `MCP server "${prefix}": the tools ${JSON.stringify(owner)} and ${JSON.stringify(remote)} would both be named "${name}".`,
        );
      }
      owners.set(name, remote);
      names.set(remote, name);
    }
  }
  return names;
}

function baseName(prefix: string, remoteName: string): string {
  return `${prefix}__${reduceName(remoteName) || 'tool'}`;
}

function hashed(name: string, remoteName: string): string {
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
