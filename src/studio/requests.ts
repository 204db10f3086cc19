import type { IncomingMessage, ServerResponse } from 'node:http';
import { AgentError, type AgentErrorCode } from '../domain/errors.js';

/**
 * What the studio's API reads from a request, and how it answers: JSON, a refusal being
 * `{ ok: false, code, message }` with a 4xx status when it is the client's doing, 500 otherwise.
 */

const MAX_BODY = 1 << 20;

/** A step's version as the query gives it: digits only (an absent or empty one is not step 0). */
export function versionOf(text: string | null): number {
  if (text === null || !/^\d{1,15}$/.test(text))
    throw new AgentError(
      'InvalidInput',
      `version must be a step's version (an integer ≥ 0), got ${JSON.stringify(text)}`,
    );
  return Number(text);
}

class BadRequest extends Error {
  constructor(
    message: string,
    readonly status: 400 | 413 = 400,
  ) {
    super(message);
  }
}

/** A refusal of the API is the client's doing (4xx); a store that fails, the server's (5xx), as anything else. */
function statusOf(error: unknown): number {
  if (error instanceof BadRequest) return error.status;
  if (!(error instanceof AgentError)) return 500;
  if (error.code === 'SessionNotFound') return 404;
  if (error.code === 'StoreUnavailable') return 503;
  return SERVER_SIDE.has(error.code) ? 500 : 400;
}

const SERVER_SIDE: ReadonlySet<AgentErrorCode> = new Set(['StoreCorrupted', 'StoreFailed', 'MissingDependency']);

export function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify(body));
}

/** A request's body: a JSON object naming a session (`id`), else a typed refusal. */
export async function readRequest<T extends { id: string }>(request: IncomingMessage): Promise<T> {
  const body = await readJson(request);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new AgentError('InvalidInput', 'the body must be a JSON object');
  const id: unknown = (body as { id?: unknown }).id;
  if (typeof id !== 'string' || id === '') throw new AgentError('InvalidInput', '`id` must name a session');
  return body as T;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  if (!(request.headers['content-type'] ?? '').startsWith('application/json'))
    throw new BadRequest('the body must be JSON (content-type: application/json)');
  const body = await readBody(request);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new BadRequest('the body is not valid JSON');
  }
}

/** The body, up to `MAX_BODY` bytes; a larger one is refused (413) without being kept. */
function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const take = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY) return void chunks.push(chunk);
      request.off('data', take).off('end', done);
      chunks.length = 0;
      lingerThenCut(request);
      reject(new BadRequest(`the body is larger than ${MAX_BODY} bytes`, 413));
    };
    const done = () => resolve(Buffer.concat(chunks));
    request.on('data', take).once('end', done).once('error', reject);
  });
}

/** How long the rest of an oversized body is read and dropped before its connection is cut. */
const LINGER_MS = 1_000;

/**
 * After a body too large, the connection is cut — but not at once: closing a socket with unread data
 * resets it, and the client would lose the answer. What still comes is dropped for a moment, so a
 * body sent forever costs a second of reading, never memory.
 */
function lingerThenCut(request: IncomingMessage): void {
  const cut = setTimeout(() => request.socket.destroy(), LINGER_MS);
  cut.unref();
  request.on('data', () => {}).once('end', () => clearTimeout(cut));
  request.socket.once('close', () => clearTimeout(cut));
}

/** A request that failed: its refusal, typed (the stream of a page that hung up just ends). */
export function answerError(response: ServerResponse, error: unknown): void {
  if (response.headersSent) return void response.end();
  json(response, statusOf(error), {
    ok: false,
    code: error instanceof AgentError ? error.code : error instanceof BadRequest ? 'BadRequest' : 'InternalError',
    message: error instanceof Error ? error.message : String(error),
  });
}
