import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A fetch-style handler (`chatHandler(...)`) as a `node:http` request listener:
 * `createServer(nodeListener(chatHandler({ agentFor }))).listen(3000)`. The response streams as it is
 * written (backpressure honoured); a client that goes away before the end aborts the request's
 * signal, which is the user stopping the run. Only web APIs are used at run time.
 */
export function nodeListener(
  handler: (request: Request) => Promise<Response>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void serve(handler, req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(res.headersSent ? undefined : JSON.stringify({ error: { code: 'internal', message: String(error) } }));
    });
  };
}

async function serve(
  handler: (request: Request) => Promise<Response>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) gone.abort(new Error('the client went away'));
  });
  const method = req.method ?? 'GET';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    for (const one of [value ?? []].flat()) headers.append(name, one);
  }
  const body = method === 'GET' || method === 'HEAD' ? undefined : await readBody(req);
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const response = await handler(new Request(url, { method, headers, body, signal: gone.signal }));

  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') res.setHeader(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  res.flushHeaders();
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  gone.signal.addEventListener('abort', () => void reader.cancel(gone.signal.reason).catch(() => {}), { once: true });
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    if (!res.write(read.value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
  }
  res.end();
}

async function readBody(req: IncomingMessage): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of req) chunks.push(typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk);
  const body = new Uint8Array(new ArrayBuffer(chunks.reduce((length, chunk) => length + chunk.length, 0)));
  let offset = 0;
  for (const chunk of chunks) body.set(chunk, (offset += chunk.length) - chunk.length);
  return body;
}
