/**
 * The whole emission pipeline as real processes, for the fault test and the benchmark:
 *
 *   - the api, signer, sii-uploader and sii-poller run as child processes
 *     (`node --import tsx services/<svc>/src/main.ts`, one process each, so SIGKILL hits the
 *     service itself and not a launcher), on a PostgreSQL schema of their own, a topic prefix of
 *     their own and a Redis token-cache prefix of their own; the api runs the outbox relay and the
 *     dte-status projector in its process (packages/pipeline/src/projector/pipeline.ts);
 *   - the SII simulator runs as a child process too (its CPU is not the client's);
 *   - optionally services/rcv-sync (`withRcvSync`) and services/webhooks (`withWebhooks`) as child
 *     processes too, started after the api (which runs the migrations they read);
 *   - optionally a private Kafka broker (scripts/stack.sh with DTE_STACK_DIR and
 *     DTE_STACK_PORT_OFFSET, only Kafka: the other parts are given by their URLs), so that
 *     killing the broker disturbs no other test run on the shared one.
 *
 * Every child writes its output to `<logDir>/<name>.log` (printed at start), so a failure can be
 * read afterwards. `seedCompany` creates an organization, company (with its certification
 * resolution) and API key with the api's seed function, uploads a certificate and one CAF per
 * type over HTTP, and enrols the company and its certificate holder at the simulator.
 */
import { newRut } from './tenant-fixture';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { seedOrganization } from '@dte/api';
import { createTestCaf, createTestP12, santiagoDate, type SiiKey } from '@dte/engine';
import { createKafka, pipelineTopicSpecs, type KafkaSecurity } from '@dte/messaging';
import { body } from '../../services/api/test/support/emission-bodies';
import { RETRY_TOPICS, STATUS_DEAD_LETTER_TOPIC } from '../../services/webhooks/src/kafka-side';
import {
  migratedDatabase,
  repoRoot,
  runId,
  testStack,
  uniqueTopicPrefix,
  type MigratedDatabase,
} from './env';
import { enrolAtSii, FCH_RESOL, simAdmin as simAdminAt } from './sii-admin';

const execFileP = promisify(execFile);

export const SERVICES = ['api', 'signer', 'sii-uploader', 'sii-poller'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** A free TCP port on loopback (closed again before it is returned). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One service as a child process that can be started, killed with SIGKILL and started again.
 * Readiness is the service's own "<name> ready" log line (the api's `api ready` comes after it
 * listens and its relay and projector run). An exit nobody asked for is counted in
 * `unexpectedExits` (and restarted by the caller's supervisor if it wants).
 */
export class ServiceProcess {
  child: ChildProcess | undefined;
  starts = 0;
  kills = 0;
  unexpectedExits = 0;
  /** the last exit was not asked for (a crash); cleared by start() */
  crashed = false;
  /** the start under way, until the process is ready or gave up */
  starting: Promise<void> | undefined;
  private killing = false;

  constructor(
    readonly name: string,
    private readonly argv: string[],
    private readonly env: NodeJS.ProcessEnv,
    readonly logFile: string,
    private readonly readyPattern: RegExp,
  ) {}

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Spawns the process and resolves when it logs that it is ready. A start already under way is
   * shared; a running process is left alone.
   */
  start(timeoutMs = 90_000): Promise<void> {
    if (this.starting) return this.starting;
    if (this.running) return Promise.resolve();
    this.crashed = false;
    const pending: Promise<void> = this.spawnAndWait(timeoutMs).finally(() => {
      if (this.starting === pending) this.starting = undefined;
    });
    this.starting = pending;
    return pending;
  }

  private async spawnAndWait(timeoutMs: number): Promise<void> {
    const offset = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
    fs.appendFileSync(this.logFile, `\n=== start ${this.starts + 1} at ${new Date().toISOString()}\n`);
    const fd = fs.openSync(this.logFile, 'a');
    const child = spawn(process.execPath, this.argv, {
      cwd: repoRoot,
      env: this.env,
      stdio: ['ignore', fd, fd],
    });
    fs.closeSync(fd);
    this.child = child;
    this.starts += 1;
    child.once('exit', (code, signal) => {
      fs.appendFileSync(this.logFile, `=== exit code=${code} signal=${signal}\n`);
      if (!this.killing && this.child === child) {
        this.unexpectedExits += 1;
        this.crashed = true;
      }
    });
    const until = Date.now() + timeoutMs;
    for (;;) {
      const text = readFrom(this.logFile, offset);
      if (this.readyPattern.test(text)) return;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`${this.name} exited during start-up; log ${this.logFile}:\n${text.slice(-1500)}`);
      if (Date.now() > until)
        throw new Error(`${this.name} not ready after ${timeoutMs} ms; log ${this.logFile}`);
      await sleep(100);
    }
  }

  /** SIGKILL (also of a process still starting), and waits until the process is gone. */
  async kill9(): Promise<void> {
    const c = this.child;
    if (!c || !this.running) {
      await this.starting?.catch(() => undefined);
      return;
    }
    this.killing = true;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await gone;
    await this.starting?.catch(() => undefined);
    this.killing = false;
    this.kills += 1;
  }

  /** CPU seconds (user + system) the running process has used so far (Linux /proc). */
  cpuSeconds(): number | undefined {
    if (!this.running) return undefined;
    try {
      const stat = fs.readFileSync(`/proc/${this.child!.pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(f[11]) + Number(f[12])) / 100;
    } catch {
      return undefined;
    }
  }

  /** SIGSTOP / SIGCONT: freezes the process with its sockets open (a request it sent stays sent). */
  freeze(): void {
    if (this.running) this.child!.kill('SIGSTOP');
  }
  thaw(): void {
    if (this.running) this.child!.kill('SIGCONT');
  }

  /** SIGTERM (graceful), SIGKILL after `graceMs`. */
  async stop(graceMs = 10_000): Promise<void> {
    const c = this.child;
    if (!c || !this.running) return;
    this.killing = true;
    const gone = new Promise((r) => c.once('exit', r));
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(timer);
    await this.starting?.catch(() => undefined);
    this.killing = false;
  }
}

function readFrom(file: string, offset: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.max(0, size - offset));
    fs.readSync(fd, buf, 0, buf.length, offset);
    return buf.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A Kafka broker of its own (scripts/stack.sh with a state folder and port offset of its own;
 * PostgreSQL, Redis and the registry are given by URL so the script starts only Kafka).
 */
export class PrivateKafka {
  kills = 0;
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  get brokers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  static async start(dir: string): Promise<PrivateKafka> {
    const s = await testStack();
    let port = 0;
    for (let i = 0; i < 20 && !port; i++) {
      const p = await freePort();
      if (p + 1 < 65536 && !(await portOpen(p + 1))) port = p;
    }
    if (!port) throw new Error('no two free consecutive ports for a private Kafka');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DTE_STACK_DIR: dir,
      DTE_STACK_PORT_OFFSET: String(port - 19092),
      DATABASE_URL: s.databaseUrl,
      REDIS_URL: s.redisUrl,
      SCHEMA_REGISTRY_URL: s.schemaRegistryUrl,
    };
    delete env.KAFKA_BROKERS;
    const k = new PrivateKafka(dir, port, env);
    await k.up();
    return k;
  }

  /** scripts/stack.sh up: starts the broker (after a kill, on the same data). */
  async up(): Promise<void> {
    try {
      await execFileP('bash', [path.join(repoRoot, 'scripts/stack.sh'), 'up'], {
        cwd: repoRoot,
        env: this.env,
        maxBuffer: 1 << 20,
      });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`private Kafka: stack.sh up failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
    }
  }

  pid(): number | undefined {
    const f = path.join(this.dir, 'run/kafka.pid');
    return fs.existsSync(f) ? Number(fs.readFileSync(f, 'utf8').trim()) : undefined;
  }

  /** SIGKILL of the broker JVM; resolves when its port no longer answers. */
  async kill9(): Promise<void> {
    const pid = this.pid();
    if (!pid) throw new Error('private Kafka: no pid file');
    process.kill(pid, 'SIGKILL');
    this.kills += 1;
    const until = Date.now() + 15_000;
    while ((await portOpen(this.port)) && Date.now() < until) await sleep(100);
  }

  async down(): Promise<void> {
    await execFileP('bash', [path.join(repoRoot, 'scripts/stack.sh'), 'down'], {
      cwd: repoRoot,
      env: this.env,
    }).catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

export interface PipelineOptions {
  label: string;
  /** a broker of its own that may be killed (else the shared one of testStack) */
  privateKafka?: boolean;
  /**
   * a broker the caller runs (e.g. a SASL_SSL one), with the security its clients need; the
   * services get it through `env` (KAFKA_BROKERS and the KAFKA_SECURITY_* variables)
   */
  externalKafka?: { brokers: string[]; security: KafkaSecurity };
  /** simulator timings: QueryEstUp -11 for registerMs, then one state per stepMs */
  sim?: { registerMs: number; stepMs: number };
  partitions?: number;
  /**
   * extra variables of every service (uploader and poller settings …); readiness is read from each
   * service's info-level "ready" line, so LOG_LEVEL must stay at info or below
   */
  env?: Record<string, string>;
  /** also run services/rcv-sync (the RCV synchronizer) as a child process */
  withRcvSync?: boolean;
  /**
   * also run services/webhooks as a child process, with every service's variables plus
   * WEBHOOKS_HEALTH_PORT=0, an SMTP_URL nothing listens on (the deactivation e-mail is only sent
   * after three exhausted deliveries) and `env` (e.g. the test-only NODE_ENV=test,
   * WEBHOOKS_ALLOW_LOOPBACK_RECEIVER=true and WEBHOOKS_TEST_CA_FILE for a loopback https
   * receiver; the api reads the first two when it builds its /webhooks routes, so a caller that
   * registers such a receiver also gives them to every service through `PipelineOptions.env`).
   * The retry and dead-letter topics it creates are deleted with the pipeline's.
   */
  withWebhooks?: { env?: Record<string, string> };
}

export interface SeededCompany {
  key: string;
  rut: string;
  orgId: string;
  companyId: string;
  certId: string;
}

export interface RunningPipeline {
  apiUrl: string;
  simUrl: string;
  db: MigratedDatabase;
  prefix: string;
  logDir: string;
  kafka?: PrivateKafka;
  services: Record<ServiceName, ServiceProcess>;
  /** services/rcv-sync, when started with withRcvSync */
  rcvSync?: ServiceProcess;
  /** services/webhooks, when started with withWebhooks */
  webhooks?: ServiceProcess;
  simulator: ServiceProcess;
  /** the variables every service was started with (for printing the configuration) */
  env: NodeJS.ProcessEnv;
  seedCompany(opts: { tipos: number[]; folios: number }): Promise<SeededCompany>;
  simAdmin<T = unknown>(method: string, p: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

/** Starts the simulator, (a private broker,) the four services, and waits until all are ready. */
export async function startPipelineProcesses(opts: PipelineOptions): Promise<RunningPipeline> {
  const s = await testStack();
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), `dte-${opts.label}-${runId}-`));
  const cleanups: (() => Promise<unknown>)[] = [];
  const kafka = opts.privateKafka ? await PrivateKafka.start(path.join(logDir, 'stack')) : undefined;
  if (kafka) cleanups.push(() => kafka.down());
  try {
    const db = await migratedDatabase(opts.label);
    cleanups.push(() => db.cleanup());
    const prefix = uniqueTopicPrefix(opts.label);
    const brokers = opts.externalKafka?.brokers ?? (kafka ? kafka.brokers : s.kafkaBrokers);
    const kafkaSecurity = opts.externalKafka?.security;
    const partitions = String(opts.partitions ?? 2);

    const simPort = await freePort();
    const simUrl = `http://127.0.0.1:${simPort}`;
    const siiKeysFile = path.join(logDir, 'sii-keys.json');
    const simulator = new ServiceProcess(
      'sii-simulator',
      // a young generation that holds an envelope's parse garbage (as `npm start` runs it; README)
      ['--max-semi-space-size=64', '--import', 'tsx', 'packages/sii-simulator/src/main.ts'],
      {
        ...process.env,
        SII_SIMULATOR_PORT: String(simPort),
        SII_SIMULATOR_HOST: '127.0.0.1',
        SII_SIMULATOR_AUTO_ENROL: 'false',
        // its SII keys, written at start: the api verifies CAFs and received files with them, as
        // npm start does (SII_CAF_KEYS_FILE below)
        SII_SIMULATOR_KEYS_FILE: siiKeysFile,
        SII_SIMULATOR_CAF_KEY_BITS: '512',
        SII_SIMULATOR_REGISTER_MS: String(opts.sim?.registerMs ?? 300),
        SII_SIMULATOR_STEP_MS: String(opts.sim?.stepMs ?? 80),
        LOG_LEVEL: 'info',
      },
      path.join(logDir, 'sii-simulator.log'),
      /SII simulator listening/,
    );
    cleanups.push(() => simulator.stop());

    const apiPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: s.databaseUrl,
      DATABASE_SCHEMA: db.schema,
      REDIS_URL: s.redisUrl,
      KAFKA_BROKERS: brokers.join(','),
      SCHEMA_REGISTRY_URL: s.schemaRegistryUrl,
      KAFKA_TOPIC_PREFIX: prefix,
      PIPELINE_PARTITIONS: partitions,
      MASTER_KEY: randomBytes(32).toString('base64'),
      MASTER_KEY_ID: 'fault1',
      SESSION_SECRET: randomBytes(32).toString('hex'),
      SII_BASE_URL: simUrl,
      SII_CAF_KEYS_FILE: siiKeysFile,
      SII_TOKEN_CACHE_PREFIX: `t:${runId}:${randomBytes(4).toString('hex')}:sii:token`,
      API_HOST: '127.0.0.1',
      API_PORT: String(apiPort),
      RATE_LIMIT_MAX: '1000000',
      CAF_AUTO_INTERVAL_SEC: '0',
      SIGNER_HEALTH_PORT: '0',
      SII_UPLOADER_HEALTH_PORT: '0',
      SII_POLLER_HEALTH_PORT: '0',
      LOG_LEVEL: 'info',
      ...opts.env,
    };
    const service = (name: ServiceName) =>
      new ServiceProcess(
        name,
        ['--import', 'tsx', `services/${name}/src/main.ts`],
        env,
        path.join(logDir, `${name}.log`),
        new RegExp(`"msg":"${name} ready"`),
      );
    const services = Object.fromEntries(SERVICES.map((n) => [n, service(n)])) as Record<
      ServiceName,
      ServiceProcess
    >;
    cleanups.push(() => Promise.all(SERVICES.map((n) => services[n].stop())));

    // Topics first (so services and cleanup agree on what exists), then the processes.
    const admin = createKafka({
      brokers,
      clientId: `harness-${runId}`,
      schemaRegistryUrl: s.schemaRegistryUrl,
      topicPrefix: prefix,
      logLevel: 'nothing',
      ...(kafkaSecurity ? { kafkaSecurity } : {}),
    });
    const specs = pipelineTopicSpecs(Number(partitions));
    await admin.ensureTopics(specs);
    await admin.disconnect();
    // the webhooks service creates its retry and dead-letter topics itself
    const ownTopics = opts.withWebhooks ? [...RETRY_TOPICS, STATUS_DEAD_LETTER_TOPIC] : [];
    cleanups.push(() =>
      deleteTopicsAndSubjects(
        brokers,
        s.schemaRegistryUrl,
        prefix,
        [...specs.map((t) => t.name), ...ownTopics],
        !kafka && !opts.externalKafka,
      ),
    );

    await simulator.start();
    // the api first: it runs the migrations of the schema; then the workers together
    await services.api.start();
    await Promise.all(SERVICES.filter((n) => n !== 'api').map((n) => services[n].start()));
    let rcvSync: ServiceProcess | undefined;
    if (opts.withRcvSync) {
      rcvSync = new ServiceProcess(
        'rcv-sync',
        ['--import', 'tsx', 'services/rcv-sync/src/main.ts'],
        { RCV_SYNC_HEALTH_PORT: '0', ...env },
        path.join(logDir, 'rcv-sync.log'),
        /"msg":"rcv-sync ready"/,
      );
      cleanups.push(() => rcvSync!.stop());
      await rcvSync.start();
    }
    let webhooks: ServiceProcess | undefined;
    if (opts.withWebhooks) {
      webhooks = new ServiceProcess(
        'webhooks',
        ['--import', 'tsx', 'services/webhooks/src/main.ts'],
        {
          WEBHOOKS_HEALTH_PORT: '0',
          SMTP_URL: 'smtp://127.0.0.1:9',
          ...env,
          ...opts.withWebhooks.env,
        },
        path.join(logDir, 'webhooks.log'),
        /"msg":"webhooks ready"/,
      );
      cleanups.push(() => webhooks!.stop());
      await webhooks.start();
    }

    const apiUrl = `http://127.0.0.1:${apiPort}/api/v1`;
    const simAdmin = <T>(method: string, p: string, body?: unknown): Promise<T> =>
      simAdminAt<T>(simUrl, method, p, body);

    return {
      apiUrl,
      simUrl,
      db,
      prefix,
      logDir,
      kafka,
      services,
      rcvSync,
      webhooks,
      simulator,
      env,
      simAdmin,
      seedCompany: async ({ tipos, folios }) => {
        const keys = await simAdmin<{ cert: SiiKey }>('GET', '/admin/sii-keys');
        return seedCompany(db, apiUrl, simUrl, keys.cert, tipos, folios);
      },
      async close() {
        for (const c of cleanups.reverse()) await c().catch(() => undefined);
      },
    };
  } catch (err) {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    throw err;
  }
}

async function deleteTopicsAndSubjects(
  brokers: string[],
  registryUrl: string,
  prefix: string,
  names: string[],
  deleteTopics: boolean,
): Promise<void> {
  const admin = createKafka({
    brokers,
    clientId: `harness-${runId}`,
    schemaRegistryUrl: registryUrl,
    topicPrefix: prefix,
    logLevel: 'nothing',
  });
  try {
    if (deleteTopics) await admin.deleteTopics(names);
  } finally {
    await admin.disconnect();
  }
  for (const name of names) {
    const subject = encodeURIComponent(`${prefix}${name}-value`);
    for (const q of ['', '?permanent=true'])
      await fetch(`${registryUrl}/subjects/${subject}${q}`, { method: 'DELETE' }).catch(() => undefined);
  }
}

/** A valid RUT with a random body: the one generator of the harnesses (tenant-fixture's newRut). */
export const randomRut = newRut;

async function seedCompany(
  db: MigratedDatabase,
  apiUrl: string,
  simUrl: string,
  siiKey: SiiKey,
  tipos: number[],
  folios: number,
): Promise<SeededCompany> {
  const rut = randomRut();
  const s = await seedOrganization(db.dataSource, {
    org: `fault-${randomUUID()}`,
    rut,
    env: 'cert',
    razonSocial: 'EMPRESA DE PRUEBA',
    giro: 'Venta de ferretería',
    direccion: 'Av. Providencia 1234',
    comuna: 'Providencia',
    actividadEconomica: 467300,
    resolucion: { numero: 0, fecha: FCH_RESOL },
  });
  const auth = { Authorization: `Bearer ${s.api_key}` };
  const certForm = new FormData();
  certForm.append('file', new Blob([createTestP12({ rut, password: 'secreto' })]), 'cert.p12');
  certForm.append('password', 'secreto');
  certForm.append('label', 'main');
  const cert = await fetch(`${apiUrl}/certificates`, { method: 'POST', headers: auth, body: certForm });
  const certBody = (await cert.json()) as { id: string };
  if (cert.status !== 201) throw new Error(`certificate upload: ${cert.status} ${JSON.stringify(certBody)}`);
  for (const tipo of tipos) {
    const xml = createTestCaf({
      siiKey,
      rutEmisor: rut,
      razonSocial: 'EMPRESA DE PRUEBA',
      tipoDte: tipo,
      desde: 1,
      hasta: folios,
      fechaAutorizacion: santiagoDate(new Date()),
      keyBits: 512,
    });
    const form = new FormData();
    form.append('file', new Blob([Buffer.from(xml, 'latin1')]), 'caf.xml');
    const res = await fetch(`${apiUrl}/caf`, { method: 'POST', headers: auth, body: form });
    if (res.status !== 201) throw new Error(`CAF ${tipo} upload: ${res.status} ${await res.text()}`);
  }
  await enrolAtSii(simUrl, rut, { razonSocial: 'EMPRESA DE PRUEBA' });
  return { key: s.api_key, rut, orgId: s.organization_id, companyId: s.company_id, certId: certBody.id };
}

/** A valid emission body of type 33, 34, 52 or 61 for `rut`, dated today (America/Santiago). */
export const emissionBody: (tipo: 33 | 34 | 52 | 61, rut: string, precio: number) => Record<string, unknown> =
  body;

/** Percentile (nearest rank) of a sorted array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
