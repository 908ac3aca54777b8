/**
 * CPU accounting of the processes a benchmark run involves (Linux /proc only):
 *
 *   - processes by pid (the services the bench started);
 *   - the process that listens on a TCP port (the shared Kafka broker, schema registry, PostgreSQL
 *     postmaster), found through /proc/net/tcp and the socket inodes in /proc/<pid>/fd;
 *   - the PostgreSQL backends serving one process: its connections to the database port are
 *     matched to pg_stat_activity.client_port, so each backend's CPU is charged to the service it
 *     serves (a backend that comes and goes during the run is still counted: `sample()` is called
 *     periodically and keeps the last value seen of each pid);
 *   - PostgreSQL's own processes (WAL writer, checkpointer …: children of the postmaster that
 *     serve no client) as one group.
 */
import fs from 'node:fs';

const TICKS = 100; // USER_HZ on Linux

/**
 * user + system CPU seconds of a pid, or undefined when it is gone; with `children`, also those of
 * its children that ended and were waited for (cutime + cstime: the xmllint runs of the SII
 * simulator, which its own figures would otherwise leave out)
 */
export function cpuSecondsOf(pid: number, children = false): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(f[11]) + Number(f[12]);
    return (children ? own + Number(f[13]) + Number(f[14]) : own) / TICKS;
  } catch {
    return undefined;
  }
}

export function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The live children of a pid (e.g. the SII simulator's resident schema validator). */
export function childrenOf(pid: number): number[] {
  // the kernel's list of the process's children (CONFIG_PROC_CHILDREN): one read, where scanning
  // every /proc/<pid>/stat at each sample cost the bench client ~0.1 ms per document
  try {
    const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    const out: number[] = [];
    for (const name of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      if (parentOf(Number(name)) === pid) out.push(Number(name));
    }
    return out;
  }
}

interface TcpSocket {
  localPort: number;
  remotePort: number;
  state: string;
  inode: string;
}

function tcpSockets(): TcpSocket[] {
  const out: TcpSocket[] = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      out.push({
        localPort: parseInt(f[1]!.split(':')[1]!, 16),
        remotePort: parseInt(f[2]!.split(':')[1]!, 16),
        state: f[3]!,
        inode: f[9]!,
      });
    }
  }
  return out;
}

function socketInodes(pid: number): Set<string> {
  const out = new Set<string>();
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  return out;
}

/** The pid listening on a loopback TCP port (a process of this user), if any. */
export function pidListeningOn(port: number): number | undefined {
  const listening = new Set(
    tcpSockets()
      .filter((s) => s.state === '0A' && s.localPort === port)
      .map((s) => s.inode),
  );
  if (listening.size === 0) return undefined;
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    for (const inode of socketInodes(Number(d))) if (listening.has(inode)) return Number(d);
  }
  return undefined;
}

/** Local ports of `pid`'s connections to `remotePort`. */
export function clientPortsOf(pid: number, remotePort: number): number[] {
  const mine = socketInodes(pid);
  return tcpSockets()
    .filter((s) => s.remotePort === remotePort && s.state === '01' && mine.has(s.inode))
    .map((s) => s.localPort);
}

/**
 * The PostgreSQL backends serving THIS process's open connections to `databaseUrl` (its client
 * ports matched in pg_stat_activity, read through `db`), and the sum of their CPU seconds now: the
 * database side of an in-process benchmark. Open the pool's connections before calling it.
 */
export async function ownBackends(
  db: { query(sql: string, params?: unknown[]): Promise<unknown> },
  databaseUrl: string,
): Promise<{ pids: number[]; cpuSeconds(): number }> {
  const ports = clientPortsOf(process.pid, Number(new URL(databaseUrl).port || 5432));
  const rows = (await db.query(`SELECT pid FROM pg_stat_activity WHERE client_port = ANY($1::int[])`, [
    ports,
  ])) as { pid: number }[];
  const pids = rows.map((r) => r.pid);
  return { pids, cpuSeconds: () => pids.reduce((s, pid) => s + (cpuSecondsOf(pid) ?? 0), 0) };
}

export type BackendQuery = () => Promise<
  { pid: number; application_name: string | null; backend_type: string }[]
>;

/**
 * A group of processes whose CPU is accounted together. `pids()` is asked at every sample (the
 * set may change); the CPU of a group is the sum over every pid it ever had of (last value seen
 * − value at start, or 0 for a pid born after the start).
 */
interface Group {
  name: string;
  pids: () => number[] | Promise<number[]>;
  children: boolean;
  base: Map<number, number>;
  last: Map<number, number>;
}

export class CpuAccount {
  private readonly groups: Group[] = [];
  private started = false;

  /** `children`: count the CPU of the pids' ended children too (a service that spawns tools) */
  add(name: string, pids: () => number[] | Promise<number[]>, opts: { children?: boolean } = {}): this {
    this.groups.push({ name, pids, children: opts.children ?? false, base: new Map(), last: new Map() });
    return this;
  }

  /** records the current CPU of every pid of every group */
  async sample(): Promise<void> {
    for (const g of this.groups) {
      for (const pid of await g.pids()) {
        const s = cpuSecondsOf(pid, g.children);
        if (s === undefined) continue;
        if (!this.started) g.base.set(pid, s);
        else if (!g.base.has(pid)) g.base.set(pid, 0);
        g.last.set(pid, s);
      }
    }
  }

  /** starts counting from now */
  async start(): Promise<void> {
    this.started = false;
    for (const g of this.groups) {
      g.base.clear();
      g.last.clear();
    }
    await this.sample();
    this.started = true;
  }

  /** CPU seconds of each group since start() (call sample() just before) */
  totals(): { name: string; seconds: number }[] {
    return this.groups.map((g) => {
      let s = 0;
      for (const [pid, last] of g.last) s += last - (g.base.get(pid) ?? 0);
      return { name: g.name, seconds: s };
    });
  }
}

/**
 * The PostgreSQL backends serving `clientPid`, found with `backends()` (pg_stat_activity) by
 * their application_name, which every service sets to `<name>@<host>:<pid>`
 * (connectionApplicationName): this works over TCP and Unix sockets alike.
 */
export async function backendsOf(clientPid: number | undefined, backends: BackendQuery): Promise<number[]> {
  if (clientPid === undefined) return [];
  const suffix = `:${clientPid}`;
  return (await backends()).filter((b) => b.application_name?.endsWith(suffix)).map((b) => b.pid);
}

/** The process titles of PostgreSQL's own processes (not a backend serving a client). */
const POSTGRES_OWN_TITLE =
  /^postgres: (checkpointer|background writer|walwriter|autovacuum (launcher|worker)|logical replication launcher|archiver|stats collector|startup|walreceiver|walsummarizer|io worker)/;

function processTitle(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return '';
  }
}

/**
 * PostgreSQL's own processes: children of the postmaster whose title names one (checkpointer,
 * WAL writer, autovacuum …). Told apart by their title, not by absence from pg_stat_activity: a
 * backend forked after the last pg_stat_activity read (another test run's connection, or a
 * service's pool growing) was counted here from its fork on, and kept there (issue 27's second
 * sitting: up to 2.7 ms per document in a long slow-SII window on a shared stack).
 * `backends` is kept for the callers; the title alone decides.
 */
export async function postgresAuxiliary(
  postmaster: number | undefined,
  _backends?: BackendQuery,
): Promise<number[]> {
  if (postmaster === undefined) return [];
  return childrenOf(postmaster).filter((pid) => POSTGRES_OWN_TITLE.test(processTitle(pid)));
}
