import { AgentError } from '../domain/errors.js';
import type { ConnectionSettings } from './connection.js';
import type { McpServerConfig, McpToolsOptions } from './types.js';

export interface McpSettings extends ConnectionSettings {
  call: { callMs: number; totalMs: number; maxResultBytes: number };
}

const MAX_DELAY = 2 ** 31 - 1;
const MIB = 1024 * 1024;
export const DEFAULT_MAX_RESULT_BYTES = 4 * MIB;
const MAX_RESULT_BYTES_CAP = 256 * MIB;
/** The MCP SDK's own stdio read limit; raised only to let a result of `maxResultBytes` (and its envelope) through. */
const SDK_READ_LIMIT = 10 * MIB;
const ENVELOPE_BYTES = 64 * 1024;

/** Checks the server and options once, up front: a typo never silently changes behaviour. */
export function resolveSettings(server: McpServerConfig, options: McpToolsOptions): McpSettings {
  const invalid = (path: string, expected: string) =>
    new AgentError('InvalidOptions', `mcpTools: ${path} must be ${expected}.`);
  if (typeof server !== 'object' || server === null)
    throw invalid('the server', 'an object ({ command, args, env } or { url, headers })');
  const stdio = typeof (server as { command?: unknown }).command === 'string';
  const http =
    typeof (server as { url?: unknown }).url === 'string' || (server as { url?: unknown }).url instanceof URL;
  if (stdio === http)
    throw invalid('the server', 'either { command, args?, env? } (stdio) or { url, headers? } (Streamable HTTP)');
  if (http) {
    try {
      new URL((server as { url: string | URL }).url);
    } catch {
      throw invalid('server.url', 'an absolute URL');
    }
  }
  if (typeof options !== 'object' || options === null) throw invalid('options', 'an object');
  if (options.name !== undefined && (typeof options.name !== 'string' || !/^[A-Za-z0-9_-]{1,32}$/.test(options.name))) {
    throw invalid('name', '1 to 32 characters of letters, digits, "_" or "-"');
  }
  const replay = (value: unknown, path: string) => {
    if (value !== undefined && value !== 'never' && value !== 'safe') throw invalid(path, `'never' or 'safe'`);
  };
  const flag = (value: unknown, path: string) => {
    if (value !== undefined && typeof value !== 'boolean') throw invalid(path, 'a boolean');
  };
  replay(options.replay, 'replay');
  flag(options.requiresApproval, 'requiresApproval');
  for (const [tool, override] of Object.entries(options.tools ?? {})) {
    replay(override?.replay, `tools.${tool}.replay`);
    flag(override?.requiresApproval, `tools.${tool}.requiresApproval`);
  }
  if (options.elicitation !== undefined && typeof options.elicitation !== 'function')
    throw invalid('elicitation', 'a function');
  const ms = (value: number | undefined, fallback: number, path: string, min = 1) => {
    const chosen = value ?? fallback;
    if (!Number.isInteger(chosen) || chosen < min || chosen > MAX_DELAY)
      throw invalid(path, `an integer from ${min} to ${MAX_DELAY} (ms)`);
    return chosen;
  };
  const callMs = ms(options.timeouts?.callMs, 60_000, 'timeouts.callMs');
  const totalMs = ms(options.timeouts?.totalMs, 600_000, 'timeouts.totalMs');
  if (totalMs < callMs) throw invalid('timeouts.totalMs', `at least timeouts.callMs (${callMs})`);
  const maxResultBytes = options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES;
  if (!Number.isInteger(maxResultBytes) || maxResultBytes < 1 || maxResultBytes > MAX_RESULT_BYTES_CAP)
    throw invalid('maxResultBytes', `an integer from 1 to ${MAX_RESULT_BYTES_CAP} (bytes)`);
  const maxAttempts = options.reconnect?.maxAttempts ?? 5;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 1_000)
    throw invalid('reconnect.maxAttempts', 'an integer from 1 to 1000');
  return {
    connectMs: ms(options.timeouts?.connectMs, 30_000, 'timeouts.connectMs'),
    call: { callMs, totalMs, maxResultBytes },
    readLimitBytes: Math.max(SDK_READ_LIMIT, maxResultBytes + ENVELOPE_BYTES),
    reconnect: {
      maxAttempts,
      baseDelayMs: ms(options.reconnect?.baseDelayMs, 100, 'reconnect.baseDelayMs', 0),
      maxDelayMs: ms(options.reconnect?.maxDelayMs, 5_000, 'reconnect.maxDelayMs', 0),
    },
  };
}
