import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { createTraceRecorder, type TraceRecorder, type TraceRecorderOptions } from './recorder.js';

export interface FileTraceRecorder extends TraceRecorder {
  readonly path: string;
  /** Flushes and closes the file; lines recorded afterwards are dropped. Resolves with the number of entries. */
  close(): Promise<{ path: string; entries: number }>;
}

/**
 * The Node adapter: a trace recorder that appends each line to `path` as it is recorded (the file
 * is replaced), so a crashed process still leaves the trace up to the crash.
 */
export function recordTrace(path: string, options: Omit<TraceRecorderOptions, 'write'> = {}): FileTraceRecorder {
  const stream = createWriteStream(path, { encoding: 'utf8' });
  let failure: Error | null = null;
  let closed = false;
  stream.on('error', (error) => {
    failure = error;
  });
  const recorder = createTraceRecorder({
    keepLines: false,
    ...options,
    write: (line) => {
      if (!closed && failure === null) stream.write(`${line}\n`);
    },
  });
  let closing: Promise<{ path: string; entries: number }> | null = null;
  return {
    inspect: recorder.inspect,
    events: recorder.events,
    lines: () => recorder.lines(),
    toJSONL: () => recorder.toJSONL(),
    get entryCount() {
      return recorder.entryCount;
    },
    path,
    close() {
      closed = true;
      closing ??= (async () => {
        stream.end();
        try {
          await finished(stream);
        } catch (error) {
          failure ??= error instanceof Error ? error : new Error(String(error));
        }
        if (failure) throw new Error(`Could not write the trace to ${path}: ${failure.message}`, { cause: failure });
        return { path, entries: recorder.entryCount };
      })();
      return closing;
    },
  };
}
