/**
 * Who holds a lease: the process, so that an acquirer on the same host can tell a dead owner from a
 * live one and take its session over at once instead of waiting for the ttl. `host` names a pid
 * space: on Linux the machine's boot id and the pid namespace (two containers on one machine are two
 * hosts: their pids cannot be compared), elsewhere the host name. `startedAt` is the process's start
 * time where the OS gives it (Linux: /proc/<pid>/stat), so a pid reused by another process is not
 * mistaken for the owner.
 */
export interface LeaseHolder {
  host: string;
  pid: number;
  startedAt?: number;
}

type Fs = typeof import('node:fs');
type Os = typeof import('node:os');

/** Node's built-in modules when running on Node (the core stays browser-safe: nothing is imported). */
function builtin<T>(name: string): T | null {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  try {
    return (proc?.getBuiltinModule?.(name) as T | undefined) ?? null;
  } catch {
    return null;
  }
}

function readText(fs: Fs, path: string): string | null {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
function startTimeOf(fs: Fs, pid: number): number | null {
  const stat = readText(fs, `/proc/${pid}/stat`);
  if (stat === null) return null;
  // The command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[19]);
  return Number.isSafeInteger(ticks) ? ticks : null;
}

let self: LeaseHolder | null | undefined;

/** This process as a lease holder; null where no process identity exists (a browser). */
export function thisProcess(): LeaseHolder | null {
  if (self !== undefined) return self;
  const proc = (globalThis as { process?: { pid?: unknown } }).process;
  const fs = builtin<Fs>('node:fs');
  const os = builtin<Os>('node:os');
  if (typeof proc?.pid !== 'number' || !os) return (self = null);
  const pid = proc.pid;
  const name = os.hostname();
  const boot = fs ? readText(fs, '/proc/sys/kernel/random/boot_id')?.trim() : undefined;
  let namespace: string | undefined;
  try {
    namespace = fs?.readlinkSync('/proc/self/ns/pid');
  } catch {
    namespace = undefined;
  }
  const host = boot && namespace ? `${name}/${boot}/${namespace}` : name;
  const startedAt = fs ? startTimeOf(fs, pid) : null;
  self = { host, pid, ...(startedAt !== null ? { startedAt } : {}) };
  return self;
}

/**
 * True when the holder's process is known to be gone: it ran on this host (same pid space) and no
 * process with its pid exists, or the one that does started at another time (the pid was reused).
 * Unknown is alive: only a certain death skips the ttl.
 */
export function holderIsGone(holder: LeaseHolder, acquirer: LeaseHolder): boolean {
  if (holder.host !== acquirer.host) return false;
  if (holder.pid === acquirer.pid) {
    return (
      holder.startedAt !== undefined && acquirer.startedAt !== undefined && holder.startedAt !== acquirer.startedAt
    );
  }
  const fs = builtin<Fs>('node:fs');
  if (fs && fs.existsSync('/proc/self/stat')) {
    const started = startTimeOf(fs, holder.pid);
    if (started === null) return true;
    return holder.startedAt !== undefined && started !== holder.startedAt;
  }
  const proc = (globalThis as { process?: { kill?: (pid: number, signal: number) => unknown } }).process;
  try {
    proc?.kill?.(holder.pid, 0);
    return false;
  } catch (error) {
    return (error as { code?: unknown }).code === 'ESRCH';
  }
}
