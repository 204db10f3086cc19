import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync, inflateSync } from 'node:zlib';

/** One span as OTLP/HTTP JSON carries it (the fields the tests read). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: OtlpKeyValue[];
  events?: Array<{ name: string; timeUnixNano: string | number; attributes?: OtlpKeyValue[] }>;
  status?: { code?: number; message?: string };
}

export interface OtlpKeyValue {
  key: string;
  value: OtlpAnyValue;
}

export interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
}

interface ExportRequest {
  resourceSpans?: Array<{ scopeSpans?: Array<{ scope?: { name?: string }; spans?: OtlpSpan[] }> }>;
}

export interface OtlpReceiver {
  /** The traces endpoint: `http://127.0.0.1:<port>/v1/traces`. */
  url: string;
  /** Every span received so far, with the instrumentation scope that sent it. */
  spans: Array<OtlpSpan & { scope: string | undefined }>;
  /** Requests that were not `POST /v1/traces` with a JSON body (each answered 4xx). */
  rejected: string[];
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function decode(body: Buffer, encoding: string | undefined): ExportRequest {
  const raw = encoding === 'gzip' ? gunzipSync(body) : encoding === 'deflate' ? inflateSync(body) : body;
  return JSON.parse(raw.toString('utf8')) as ExportRequest;
}

/**
 * A minimal OTLP/HTTP trace receiver on loopback: accepts `POST /v1/traces` with a JSON body (what
 * `@opentelemetry/exporter-trace-otlp-http` sends), decodes it and answers an empty success.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: OtlpReceiver['spans'] = [];
  const rejected: string[] = [];
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      const type = request.headers['content-type'] ?? '';
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !type.startsWith('application/json')) {
        rejected.push(`${request.method} ${request.url} (${type})`);
        response.writeHead(request.url === '/v1/traces' ? 415 : 404).end();
        return;
      }
      const decoded = decode(body, request.headers['content-encoding']);
      for (const resource of decoded.resourceSpans ?? []) {
        for (const scope of resource.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) spans.push({ ...span, scope: scope.scope?.name });
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    rejected,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
