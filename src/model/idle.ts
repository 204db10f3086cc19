/** What a read limited by `withinIdle` gives when the provider stayed silent too long. */
export const IDLE: unique symbol = Symbol('idle');

/**
 * One read of a provider's body, limited to `ms` of silence (real time: adapters do I/O). Without
 * a limit it is the read itself. The body's silence is limited on every read, not only until the
 * headers: a stream that sends headers and one chunk then stalls times out.
 */
export function withinIdle<T>(read: Promise<T>, ms: number | undefined, onIdle: () => void): Promise<T | typeof IDLE> {
  if (ms === undefined) return read;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<typeof IDLE>((resolve) => {
    timer = setTimeout(() => {
      // Settled first: cancelling the request may settle the pending read in the same tick.
      resolve(IDLE);
      onIdle();
    }, ms);
  });
  return Promise.race([read, idle]).finally(() => clearTimeout(timer));
}

export function idleMessage(ms: number): string {
  return `the provider sent nothing for ${ms} ms`;
}
