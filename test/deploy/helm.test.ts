// The deployment: the Helm chart in deploy/helm/dte-service rendered by a real `helm template`
// (the helm of .cache/bin, which `bash scripts/ensure-helm.sh` builds, or of PATH or ~/go/bin;
// outside CI, without one, skipped with the reason as the pending test's title; in CI a failure),
// and the image's scripts (deploy/docker-entrypoint.sh, deploy/probe.cjs) run for real, in the
// compiled tree the image holds (test/support/compiled-tree.ts: dist/ and production dependencies).
// The oracle for the rendered configuration is each service's own config reader: the variables a
// pod would get (its ConfigMaps through envFrom, its env entries, a stand-in for the existing
// Secret) are handed to loadConfig / messagingConfigFromEnv / databaseOptionsFromEnv.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { expect } from 'chai';
import { parseAllDocuments, parse as parseYaml } from 'yaml';

import { databaseOptionsFromEnv } from '@dte/database';
import { createKafka, messagingConfigFromEnv, pipelineTopicSpecs } from '@dte/messaging';
import { shutdownGraceMs, startHealthServer, type HealthServer } from '@dte/service-runtime';
import { endpointsFromConfig, type SiiClientConfig } from '@dte/sii-client';

import { loadConfig as apiConfig } from '../../services/api/src/config';
import { loadConfig as rcvSyncConfig } from '../../services/rcv-sync/src/config';
import { loadConfig as signerConfig } from '../../services/signer/src/config';
import { loadConfig as pollerConfig } from '../../services/sii-poller/src/config';
import { loadConfig as uploaderConfig } from '../../services/sii-uploader/src/config';
import { loadConfig as webhooksConfig } from '../../services/webhooks/src/config';
import { SIGNER_CONSUMER } from '../../services/signer/src/signer';
import { POLLER_CONSUMER } from '../../services/sii-poller/src/poller';
import { UPLOADER_CONSUMER } from '../../services/sii-uploader/src/uploader';
import { STATUS_GROUP } from '../../services/webhooks/src/kafka-side';
import { compiledTree, removeCompiledTree } from '../support/compiled-tree';
import { freshSchema, repoRoot, testStack, uniqueTopicPrefix, type FreshSchema } from '../support/env';

const execFileP = promisify(execFile);

const CHART = path.join(repoRoot, 'deploy/helm/dte-service');
const PRODUCTION_VALUES = path.join(repoRoot, 'deploy/helm/examples/production-values.yaml');
const PROBE = path.join(repoRoot, 'deploy/probe.cjs');
const SERVICES = ['api', 'signer', 'sii-uploader', 'sii-poller', 'webhooks', 'rcv-sync'] as const;
type ServiceName = (typeof SERVICES)[number];

// ---------------------------------------------------------------- rendered manifests

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface Probe {
  httpGet?: { path: string; port: string | number };
  exec?: { command: string[] };
}
interface Container {
  name: string;
  image: string;
  args?: string[];
  command?: string[];
  workingDir?: string;
  envFrom?: { configMapRef?: { name: string } }[];
  env?: EnvVar[];
  ports?: { name: string; containerPort: number }[];
  startupProbe?: Probe;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: unknown;
  securityContext?: { readOnlyRootFilesystem?: boolean; allowPrivilegeEscalation?: boolean };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodTemplate {
  metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    containers: Container[];
    restartPolicy?: string;
    securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
    volumes?: { name: string; emptyDir?: object; secret?: { secretName: string } }[];
  };
}
interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string> } & Record<string, string>;
    template?: PodTemplate;
    ports?: { name: string; port: number; targetPort: string | number }[];
    maxUnavailable?: number | string;
    clusterIP?: string;
    // HorizontalPodAutoscaler (autoscaling/v2)
    scaleTargetRef?: { apiVersion: string; kind: string; name: string };
    minReplicas?: number;
    maxReplicas?: number;
    metrics?: HpaMetric[];
    // ServiceMonitor
    endpoints?: { port: string; path: string; interval: string }[];
  };
}
interface HpaMetric {
  type: string;
  resource?: { name: string; target: { type: string; averageUtilization?: number } };
  external?: {
    metric: { name: string; selector?: { matchLabels?: Record<string, string> } };
    target: { type: string; averageValue?: string };
  };
}

function findHelm(): string | undefined {
  const dirs = [path.join(repoRoot, '.cache', 'bin')];
  dirs.push(...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean));
  dirs.push(path.join(os.homedir(), 'go', 'bin'));
  for (const dir of dirs) {
    const file = path.join(dir, 'helm');
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeout?: number; cwd?: string } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileP(cmd, args, {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      timeout: opts.timeout ?? 60000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number | string; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

function byKindName(ms: Manifest[], kind: string, name: string): Manifest {
  const found = ms.filter((m) => m.kind === kind && m.metadata.name === name);
  expect(found, `${kind} ${name}`).to.have.length(1);
  return found[0]!;
}

function podOf(m: Manifest): PodTemplate {
  expect(m.spec?.template, `${m.kind} ${m.metadata.name} has a pod template`).to.be.an('object');
  return m.spec!.template!;
}

function containerOf(m: Manifest): Container {
  const containers = podOf(m).spec.containers;
  expect(containers, `${m.metadata.name} containers`).to.have.length(1);
  return containers[0]!;
}

/**
 * The environment Kubernetes gives the container: each envFrom ConfigMap (it must be rendered),
 * then the env entries (which win), secretKeyRefs read from `secret` standing in for the Secret.
 */
function containerEnv(
  ms: Manifest[],
  c: Container,
  secretName: string,
  secret: Record<string, string>,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const ref of c.envFrom ?? []) {
    expect(ref.configMapRef, 'envFrom only from ConfigMaps').to.be.an('object');
    Object.assign(env, byKindName(ms, 'ConfigMap', ref.configMapRef!.name).data ?? {});
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) {
      env[e.name] = e.value;
      continue;
    }
    const ref = e.valueFrom?.secretKeyRef;
    expect(ref, `${e.name} has a value or a secretKeyRef`).to.be.an('object');
    expect(ref!.name, `${e.name} comes from the existing Secret`).to.equal(secretName);
    expect(secret, `the Secret has the key of ${e.name}`).to.have.property(ref!.key);
    env[e.name] = secret[ref!.key]!;
  }
  return env;
}

/** A CA certificate standing in for the contents of the kafka-ca Secret a pod mounts. */
let mountedSecretsDir: string | undefined;
function mountedFiles(env: Record<string, string>): Record<string, string> {
  if (!mountedSecretsDir) {
    mountedSecretsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-mounts-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        'ca.key',
        '-out',
        'ca.crt',
        '-days',
        '1',
        '-subj',
        '/CN=kafka test CA',
      ],
      { cwd: mountedSecretsDir, stdio: 'pipe' },
    );
    // the api's files: the SII's CAF keys (the ConfigMap) and the OAuth JWKS (the Secret)
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    fs.writeFileSync(
      path.join(mountedSecretsDir, 'sii-caf-keys.json'),
      JSON.stringify({
        cert: [{ idk: 100, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }) }],
      }),
    );
    fs.writeFileSync(
      path.join(mountedSecretsDir, 'jwks.json'),
      JSON.stringify({
        keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' }],
      }),
    );
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env))
    out[k] = v.replace(
      /^\/etc\/dte\/(kafka-tls|registry-tls|sii-caf-keys|oauth-jwks)\//,
      `${mountedSecretsDir}/`,
    );
  return out;
}

function secretVars(c: Container): string[] {
  return (c.env ?? []).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name);
}

/** A probe's port: the exec probe's argument or the named/numbered httpGet port. */
function probePort(c: Container, p: Probe | undefined): { port: number; path: string; exec: boolean } {
  expect(p, `${c.name} probe`).to.be.an('object');
  if (p!.exec) {
    const [node, script, port, probePath] = p!.exec.command;
    expect([node, script]).to.deep.equal(['node', '/app/deploy/probe.cjs']);
    return { port: Number(port), path: probePath!, exec: true };
  }
  const port = p!.httpGet!.port;
  const numeric =
    typeof port === 'number' ? port : (c.ports?.find((cp) => cp.name === port)?.containerPort ?? NaN);
  return { port: numeric, path: p!.httpGet!.path, exec: false };
}

// Stand-ins for the existing Secret; the example values map the variables to lower-case keys.
const SECRET_VALUES = {
  MASTER_KEY: randomBytes(32).toString('base64'),
  SESSION_SECRET: randomBytes(32).toString('hex'),
  DATABASE_URL: 'postgres://dte:s3cret@pg.example.internal:5432/dte',
  REDIS_URL: 'redis://:s3cret@redis.example.internal:6379',
  SMTP_URL: 'smtp://dte:s3cret@smtp.example.internal:587',
};
const DEFAULT_SECRET: Record<string, string> = { ...SECRET_VALUES };
/** what the production example's managed Kafka and registry credentials stand in as */
const MESSAGING_SECRET_VALUES = {
  KAFKA_SASL_USERNAME: 'dte-prod',
  KAFKA_SASL_PASSWORD: randomBytes(12).toString('hex'),
  SCHEMA_REGISTRY_USERNAME: 'dte-registry',
  SCHEMA_REGISTRY_PASSWORD: randomBytes(12).toString('hex'),
};
const MESSAGING_SECRET_VARS = Object.keys(MESSAGING_SECRET_VALUES);
const PRODUCTION_SECRET: Record<string, string> = {
  'kafka-sasl-username': MESSAGING_SECRET_VALUES.KAFKA_SASL_USERNAME,
  'kafka-sasl-password': MESSAGING_SECRET_VALUES.KAFKA_SASL_PASSWORD,
  'schema-registry-username': MESSAGING_SECRET_VALUES.SCHEMA_REGISTRY_USERNAME,
  'schema-registry-password': MESSAGING_SECRET_VALUES.SCHEMA_REGISTRY_PASSWORD,
  'master-key': SECRET_VALUES.MASTER_KEY,
  'session-secret': SECRET_VALUES.SESSION_SECRET,
  'database-url': SECRET_VALUES.DATABASE_URL,
  'redis-url': SECRET_VALUES.REDIS_URL,
  'smtp-url': SECRET_VALUES.SMTP_URL,
};

/** The port each service's own reader takes from the environment, and its SII endpoints. */
function readServiceConfig(
  svc: ServiceName,
  env: Record<string, string>,
): { port: number; host?: string; sii?: SiiClientConfig } {
  switch (svc) {
    case 'api': {
      const c = apiConfig(env);
      return { port: c.port, host: c.host };
    }
    case 'signer':
      return { port: signerConfig(env).healthPort };
    case 'sii-uploader': {
      const c = uploaderConfig(env);
      return { port: c.healthPort, sii: c };
    }
    case 'sii-poller': {
      const c = pollerConfig(env);
      return { port: c.healthPort, sii: c };
    }
    case 'webhooks':
      return { port: webhooksConfig(env).healthPort };
    case 'rcv-sync':
      return { port: rcvSyncConfig(env).healthPort };
  }
}

const helm = findHelm();

describe('deploy: the Helm chart rendered by helm template', function () {
  this.timeout(60000);

  if (!helm) {
    if (process.env.CI) {
      // CI installs helm (.ci/run, scripts/ensure-helm.sh): a missing one is a failure there
      it('finds helm in .cache/bin or on PATH (CI installs it with scripts/ensure-helm.sh)', () => {
        expect.fail('no helm binary in .cache/bin, on PATH or in ~/go/bin');
      });
      return;
    }
    it(
      'skipped: no helm binary in .cache/bin, on PATH or in ~/go/bin (bash scripts/ensure-helm.sh builds one)',
    );
    return;
  }
  const helmBin = helm;

  async function render(release: string, args: string[] = []): Promise<Manifest[]> {
    const out = await run(helmBin, ['template', release, CHART, '--namespace', 'dte', ...args]);
    expect(out.code, out.stderr).to.equal(0);
    return parseAllDocuments(out.stdout)
      .map((d) => d.toJS() as Manifest | null)
      .filter((m): m is Manifest => m !== null);
  }

  let defaults: Manifest[];
  let production: Manifest[];
  const productionValues = parseYaml(fs.readFileSync(PRODUCTION_VALUES, 'utf8')) as {
    fullnameOverride: string;
    image: { repository: string; tag: string };
    secrets: { existingSecret: string };
    postgresql: { schema: string };
    kafka: { brokers: string[]; sessionTimeoutMs: number };
    services: Record<
      ServiceName,
      {
        replicas: number;
        resources: unknown;
        secretEnv: string[];
        autoscaling?: {
          enabled: boolean;
          minReplicas: number;
          maxReplicas: number;
          targetCPUUtilizationPercentage: number;
          consumerLag?: { enabled: boolean; consumerGroup: string; targetAverageValue: number };
        };
      }
    >;
  };

  before(async () => {
    [defaults, production] = await Promise.all([render('dte'), render('dte', ['-f', PRODUCTION_VALUES])]);
  });

  it('passes helm lint --strict with the default values and with the production example', async () => {
    for (const args of [[], ['-f', PRODUCTION_VALUES]]) {
      const out = await run(helmBin, ['lint', '--strict', CHART, ...args]);
      expect(out.code, `${out.stdout}${out.stderr}`).to.equal(0);
      expect(out.stdout).to.include('0 chart(s) failed');
    }
  });

  it('renders a Deployment and a PDB per service, the api and metrics Services, the migration Job and no Secret', () => {
    const kinds = (kind: string, ms = defaults) =>
      ms
        .filter((m) => m.kind === kind)
        .map((m) => m.metadata.name)
        .sort();
    const perService = (suffix = '') => SERVICES.map((s) => `dte-dte-service-${s}${suffix}`).sort();
    expect(kinds('Deployment')).to.deep.equal(perService());
    expect(kinds('Service')).to.deep.equal([...perService('-metrics'), 'dte-dte-service-api'].sort());
    expect(kinds('PodDisruptionBudget')).to.deep.equal(perService());
    expect(kinds('HorizontalPodAutoscaler'), 'no HPA unless asked').to.deep.equal([]);
    expect(kinds('ServiceMonitor'), 'no ServiceMonitor unless asked').to.deep.equal([]);
    expect(kinds('Job')).to.deep.equal(['dte-dte-service-migrate']);
    expect(kinds('ConfigMap')).to.include('dte-dte-service-common');
    expect(kinds('Secret')).to.deep.equal([]);
    expect(kinds('Secret', production)).to.deep.equal([]);
    for (const svc of SERVICES) {
      const d = byKindName(defaults, 'Deployment', `dte-dte-service-${svc}`);
      // the compiled JavaScript with plain node (no tsx), from the service's own folder
      const c = containerOf(d);
      expect(c.command, svc).to.deep.equal([
        '/usr/bin/tini',
        '--',
        'node',
        '--enable-source-maps',
        'dist/main.js',
      ]);
      expect(c.workingDir, svc).to.equal(`/app/services/${svc}`);
    }
  });

  for (const which of ['default', 'production'] as const) {
    it(`gives each service (${which} values) a configuration its own reader accepts, probes on its port, the real SII`, () => {
      const ms = which === 'default' ? defaults : production;
      const prefix = which === 'default' ? 'dte-dte-service' : productionValues.fullnameOverride;
      const secretName = which === 'default' ? 'dte-secrets' : productionValues.secrets.existingSecret;
      const secret = which === 'default' ? DEFAULT_SECRET : PRODUCTION_SECRET;
      for (const svc of SERVICES) {
        const c = containerOf(byKindName(ms, 'Deployment', `${prefix}-${svc}`));
        const env = mountedFiles(containerEnv(ms, c, secretName, secret));
        expect(env.NODE_ENV, svc).to.equal('production');
        // SIGTERM drains 5 s inside the pod's grace period (default 30 s)
        expect(shutdownGraceMs(env), svc).to.equal(25_000);
        const config = readServiceConfig(svc, env);
        // rcv-sync has no Kafka client (and so no Kafka credentials): its reader is not run
        const messaging = svc === 'rcv-sync' ? undefined : messagingConfigFromEnv(svc, env);
        if (which === 'production' && messaging) {
          expect(messaging.brokers).to.deep.equal(productionValues.kafka.brokers);
          expect(messaging.sessionTimeoutMs).to.equal(productionValues.kafka.sessionTimeoutMs);
          expect(secretVars(c).sort(), svc).to.deep.equal(
            [
              ...productionValues.services[svc].secretEnv,
              ...(svc === 'rcv-sync' ? [] : MESSAGING_SECRET_VARS),
            ].sort(),
          );
          if (svc !== 'rcv-sync') {
            // SASL/SCRAM over TLS with the mounted CA, the registry with basic auth
            expect(messaging.kafkaSecurity?.sasl, svc).to.deep.equal({
              mechanism: 'scram-sha-512',
              username: MESSAGING_SECRET_VALUES.KAFKA_SASL_USERNAME,
              password: MESSAGING_SECRET_VALUES.KAFKA_SASL_PASSWORD,
            });
            expect(messaging.kafkaSecurity?.ssl, svc).to.deep.equal({
              ca: fs.readFileSync(path.join(mountedSecretsDir!, 'ca.crt'), 'utf8'),
            });
            expect(messaging.registrySecurity?.auth, svc).to.deep.equal({
              username: MESSAGING_SECRET_VALUES.SCHEMA_REGISTRY_USERNAME,
              password: MESSAGING_SECRET_VALUES.SCHEMA_REGISTRY_PASSWORD,
            });
            const pod = podOf(byKindName(ms, 'Deployment', `${prefix}-${svc}`))
              .spec as PodTemplate['spec'] & {
              volumes?: { name: string; secret?: { secretName: string } }[];
            };
            expect(pod.volumes?.find((v) => v.secret)?.secret?.secretName, svc).to.equal('kafka-ca');
          }
        } else if (messaging) {
          expect(messaging, svc).to.not.have.property('kafkaSecurity');
        }
        {
          const db = databaseOptionsFromEnv(env);
          expect(db.url, svc).to.equal(SECRET_VALUES.DATABASE_URL);
          expect(db.schema, svc).to.equal(
            which === 'default' ? undefined : productionValues.postgresql.schema,
          );
        }
        const declared = c.ports!.map((p) => p.containerPort);
        expect(declared, `${svc} container port`).to.deep.equal([config.port]);
        const live = probePort(c, c.livenessProbe);
        const ready = probePort(c, c.readinessProbe);
        const startup = probePort(c, c.startupProbe);
        expect([live.port, ready.port, startup.port], `${svc} probe ports`).to.deep.equal([
          config.port,
          config.port,
          config.port,
        ]);
        expect([live.path, ready.path, startup.path]).to.deep.equal(['/healthz', '/readyz', '/healthz']);
        if (svc === 'api') {
          // reachable from the kubelet and the Service: not loopback
          expect(config.host).to.equal('0.0.0.0');
          expect(live.exec).to.equal(false);
        } else {
          // the health servers listen on 127.0.0.1 only: the probe must run inside the container
          expect(live.exec, svc).to.equal(true);
        }
        if (config.sii) {
          const endpoints = endpointsFromConfig(config.sii);
          expect(endpoints.cert.baseUrl, svc).to.equal('https://maullin.sii.cl');
          expect(endpoints.prod.baseUrl, svc).to.equal('https://palena.sii.cl');
        }
      }
      // Which secrets each service gets: only what it reads.
      // (the production example adds the Kafka and registry credentials to every Kafka client)
      const messagingVars = which === 'production' ? MESSAGING_SECRET_VARS : [];
      const vars = (svc: ServiceName) =>
        secretVars(containerOf(byKindName(ms, 'Deployment', `${prefix}-${svc}`))).sort();
      const want = (names: string[]) => [...names, ...messagingVars].sort();
      expect(vars('api')).to.deep.equal(
        want(['DATABASE_URL', 'MASTER_KEY', 'REDIS_URL', 'SESSION_SECRET', 'SMTP_URL']),
      );
      expect(vars('signer')).to.deep.equal(want(['DATABASE_URL', 'MASTER_KEY']));
      expect(vars('webhooks')).to.deep.equal(want(['DATABASE_URL', 'MASTER_KEY', 'SMTP_URL']));
      expect(vars('rcv-sync')).to.deep.equal(want(['DATABASE_URL', 'MASTER_KEY', 'REDIS_URL']));
      // No ConfigMap holds a secret variable.
      for (const cm of ms.filter((m) => m.kind === 'ConfigMap')) {
        expect(Object.keys(cm.data ?? {}), cm.metadata.name).to.not.include.members([
          'MASTER_KEY',
          'SESSION_SECRET',
          'SMTP_URL',
          'DATABASE_URL',
          'REDIS_URL',
        ]);
      }
    });
  }

  it('runs the migrations as a pre-install/pre-upgrade hook, from the Secret, without the chart ConfigMaps', () => {
    const job = byKindName(production, 'Job', `${productionValues.fullnameOverride}-migrate`);
    expect(job.metadata.annotations?.['helm.sh/hook']?.split(',').sort()).to.deep.equal([
      'pre-install',
      'pre-upgrade',
    ]);
    const c = containerOf(job);
    expect(c.command).to.deep.equal([
      '/usr/bin/tini',
      '--',
      'node',
      '--enable-source-maps',
      'dist/cli/migrate.js',
    ]);
    expect(c.workingDir).to.equal('/app/packages/database');
    expect(podOf(job).spec.restartPolicy).to.equal('Never');
    // A pre-install hook runs before the release's ConfigMaps exist.
    expect(c.envFrom ?? []).to.deep.equal([]);
    const env = containerEnv(production, c, productionValues.secrets.existingSecret, PRODUCTION_SECRET);
    expect(databaseOptionsFromEnv(env)).to.include({
      url: SECRET_VALUES.DATABASE_URL,
      schema: productionValues.postgresql.schema,
    });
    expect(c.image).to.equal(`${productionValues.image.repository}:${productionValues.image.tag}`);
  });

  const labelsOf = (ms: Manifest[], prefix: string, name: ServiceName) =>
    podOf(byKindName(ms, 'Deployment', `${prefix}-${name}`)).metadata.labels;
  const matches = (selector: Record<string, string>, l: Record<string, string>) =>
    Object.entries(selector).every(([k, v]) => l[k] === v);
  /** The selector picks the pods of `svc` and of no other service. */
  function selectsOnly(ms: Manifest[], prefix: string, selector: Record<string, string>, svc: ServiceName) {
    expect(matches(selector, labelsOf(ms, prefix, svc)), `${svc} selected`).to.equal(true);
    for (const other of SERVICES.filter((s) => s !== svc))
      expect(matches(selector, labelsOf(ms, prefix, other)), `${other} not selected by ${svc}'s`).to.equal(
        false,
      );
  }

  it('points the api Service and each PodDisruptionBudget at the pods of its own service only', () => {
    const svc = byKindName(defaults, 'Service', 'dte-dte-service-api');
    selectsOnly(defaults, 'dte-dte-service', svc.spec!.selector as Record<string, string>, 'api');
    const api = containerOf(byKindName(defaults, 'Deployment', 'dte-dte-service-api'));
    const target = svc.spec!.ports![0]!.targetPort;
    expect(api.ports!.map((p) => p.name)).to.include(target);
    for (const name of SERVICES) {
      const pdb = byKindName(defaults, 'PodDisruptionBudget', `dte-dte-service-${name}`);
      selectsOnly(defaults, 'dte-dte-service', pdb.spec!.selector!.matchLabels!, name);
      expect(pdb.spec!.maxUnavailable, name).to.equal(1);
    }
    // a PDB can be turned off per service
    return render('dte', ['--set', 'services.rcv-sync.pdb.enabled=false']).then((ms) => {
      const pdbs = ms.filter((m) => m.kind === 'PodDisruptionBudget').map((m) => m.metadata.name);
      expect(pdbs)
        .to.have.length(SERVICES.length - 1)
        .and.not.include('dte-dte-service-rcv-sync');
    });
  });

  it('autoscales by CPU and, where configured, by the consumer group lag as an External metric (production)', () => {
    const prefix = productionValues.fullnameOverride;
    const hpas = production.filter((m) => m.kind === 'HorizontalPodAutoscaler');
    const scaled = SERVICES.filter((s) => productionValues.services[s].autoscaling?.enabled);
    expect(scaled, 'the production example autoscales the api and the consumers').to.include.members([
      'api',
      'signer',
      'sii-uploader',
      'webhooks',
    ]);
    expect(hpas.map((h) => h.metadata.name).sort()).to.deep.equal(scaled.map((s) => `${prefix}-${s}`).sort());
    // The consumer groups the services really join (the production example has no topic prefix).
    const realGroup: Partial<Record<ServiceName, string>> = {
      signer: SIGNER_CONSUMER,
      'sii-uploader': UPLOADER_CONSUMER,
      'sii-poller': POLLER_CONSUMER,
      webhooks: STATUS_GROUP,
    };
    for (const name of scaled) {
      const want = productionValues.services[name].autoscaling!;
      const hpa = byKindName(production, 'HorizontalPodAutoscaler', `${prefix}-${name}`);
      expect(hpa.apiVersion).to.equal('autoscaling/v2');
      expect(hpa.spec!.scaleTargetRef).to.deep.equal({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: `${prefix}-${name}`,
      });
      expect([hpa.spec!.minReplicas, hpa.spec!.maxReplicas], name).to.deep.equal([
        want.minReplicas,
        want.maxReplicas,
      ]);
      // the HPA owns the replica count: the Deployment does not fight it on every upgrade
      expect(byKindName(production, 'Deployment', `${prefix}-${name}`).spec!.replicas, name).to.equal(
        undefined,
      );
      const cpu = hpa.spec!.metrics!.filter((m) => m.type === 'Resource');
      expect(cpu, name).to.deep.equal([
        {
          type: 'Resource',
          resource: {
            name: 'cpu',
            target: { type: 'Utilization', averageUtilization: want.targetCPUUtilizationPercentage },
          },
        },
      ]);
      // CPU utilisation is measured against the request: it must exist
      const resources = containerOf(byKindName(production, 'Deployment', `${prefix}-${name}`)).resources as {
        requests?: { cpu?: string };
      };
      expect(resources.requests?.cpu, `${name} CPU request`).to.be.a('string');
      const external = hpa.spec!.metrics!.filter((m) => m.type === 'External');
      if (want.consumerLag?.enabled) {
        expect(want.consumerLag.consumerGroup, `${name} scales on its real group`).to.equal(realGroup[name]);
        expect(external, name).to.deep.equal([
          {
            type: 'External',
            external: {
              metric: {
                name: 'kafka_consumergroup_lag',
                selector: { matchLabels: { consumergroup: want.consumerLag.consumerGroup } },
              },
              target: { type: 'AverageValue', averageValue: String(want.consumerLag.targetAverageValue) },
            },
          },
        ]);
      } else {
        expect(external, name).to.deep.equal([]);
      }
    }
    // a service left alone keeps its fixed replica count
    const poller = byKindName(production, 'Deployment', `${prefix}-sii-poller`);
    expect(poller.spec!.replicas).to.equal(productionValues.services['sii-poller'].replicas);
  });

  it('exposes /metrics of every service to a ServiceMonitor when asked (production)', () => {
    const prefix = productionValues.fullnameOverride;
    const monitors = production.filter((m) => m.kind === 'ServiceMonitor');
    expect(monitors.map((m) => m.metadata.name)).to.deep.equal([prefix]);
    const monitor = monitors[0]!;
    expect(monitor.apiVersion).to.equal('monitoring.coreos.com/v1');
    expect(monitor.metadata.labels).to.include({ release: 'kube-prometheus-stack' });
    expect(monitor.spec!.endpoints).to.deep.equal([
      { port: 'metrics', path: '/metrics', interval: '30s', scrapeTimeout: '10s' },
    ]);
    const selector = monitor.spec!.selector!.matchLabels!;
    const selected = production.filter(
      (m) => m.kind === 'Service' && matches(selector, m.metadata.labels ?? {}),
    );
    expect(selected.map((m) => m.metadata.name).sort()).to.deep.equal(
      SERVICES.map((s) => `${prefix}-${s}-metrics`).sort(),
    );
    for (const name of SERVICES) {
      const svc = byKindName(production, 'Service', `${prefix}-${name}-metrics`);
      selectsOnly(production, prefix, svc.spec!.selector as Record<string, string>, name);
      const c = containerOf(byKindName(production, 'Deployment', `${prefix}-${name}`));
      const port = svc.spec!.ports!.find((p) => p.name === 'metrics');
      expect(port, name).to.be.an('object');
      const target = c.ports!.find((p) => p.name === port!.targetPort);
      const env = containerEnv(production, c, productionValues.secrets.existingSecret, PRODUCTION_SECRET);
      const config = readServiceConfig(name, mountedFiles(env));
      expect(target?.containerPort, `${name} metrics port is the port the service listens on`).to.equal(
        config.port,
      );
      // reachable from Prometheus: not loopback
      expect(name === 'api' ? env.API_HOST : env.HEALTH_HOST, name).to.equal('0.0.0.0');
    }
  });

  it('sets replicas, resources and the hardening of each service from the values', () => {
    for (const svc of SERVICES) {
      const d = byKindName(production, 'Deployment', `${productionValues.fullnameOverride}-${svc}`);
      const want = productionValues.services[svc];
      expect(d.spec!.replicas, svc).to.equal(want.autoscaling?.enabled ? undefined : want.replicas);
      const c = containerOf(d);
      expect(c.resources, svc).to.deep.equal(want.resources);
      expect(c.image).to.equal(`${productionValues.image.repository}:${productionValues.image.tag}`);
      const pod = podOf(d).spec;
      expect(pod.securityContext).to.include({ runAsNonRoot: true, runAsUser: 1000 });
      expect(c.securityContext).to.include({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      // a writable /tmp even with a read-only root filesystem
      const tmp = c.volumeMounts?.find((v) => v.mountPath === '/tmp');
      expect(tmp, svc).to.be.an('object');
      expect(pod.volumes?.find((v) => v.name === tmp!.name)?.emptyDir).to.be.an('object');
    }
  });

  it('takes a credential-less PostgreSQL URL and a SII simulator as plain configuration', async () => {
    const ms = await render('dte', [
      '--set',
      'postgresql.url=postgres://dte@pg.internal:5432/dte',
      '--set',
      'sii.simulatorUrl=http://sii-sim.staging:18080',
    ]);
    for (const m of ms.filter((x) => x.kind === 'Deployment' || x.kind === 'Job')) {
      const c = containerOf(m);
      expect(secretVars(c), m.metadata.name).to.not.include('DATABASE_URL');
      const env = containerEnv(ms, c, 'dte-secrets', DEFAULT_SECRET);
      expect(databaseOptionsFromEnv(env).url, m.metadata.name).to.equal(
        'postgres://dte@pg.internal:5432/dte',
      );
    }
    const uploader = containerOf(byKindName(ms, 'Deployment', 'dte-dte-service-sii-uploader'));
    const endpoints = endpointsFromConfig(
      uploaderConfig(containerEnv(ms, uploader, 'dte-secrets', DEFAULT_SECRET)),
    );
    expect(endpoints.cert.baseUrl).to.equal('http://sii-sim.staging:18080/cert');
    expect(endpoints.prod.baseUrl).to.equal('http://sii-sim.staging:18080/prod');
  });

  it("gives the api BOLETAS_ENABLED and BHE_ENABLED from features (off by default: the spec's 404), per environment", async () => {
    const flagsOf = async (args: string[]) => {
      const ms = await render('dte', args);
      const api = containerOf(byKindName(ms, 'Deployment', 'dte-dte-service-api'));
      const c = apiConfig(containerEnv(ms, api, 'dte-secrets', DEFAULT_SECRET));
      return { boletas: [...c.boletasEnabled].sort(), bhe: [...c.bheEnabled].sort() };
    };
    expect(await flagsOf([])).to.deep.equal({ boletas: [], bhe: [] });
    expect(
      await flagsOf(['--set-string', 'features.boletas=cert', '--set-string', 'features.bhe=true']),
    ).to.deep.equal({
      boletas: ['cert'],
      bhe: ['cert', 'prod'],
    });
    const bad = await run(helmBin, ['template', 'dte', CHART, '--set-string', 'features.boletas=yes-please']);
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.match(/features[./]boletas/);
  });

  it("gives the api the SII's CAF keys and the OAuth JWKS as mounted files, and its mail settings (production)", () => {
    const d = byKindName(production, 'Deployment', `${productionValues.fullnameOverride}-api`);
    const c = containerOf(d);
    const raw = containerEnv(production, c, productionValues.secrets.existingSecret, PRODUCTION_SECRET);
    expect(raw.SII_CAF_KEYS_FILE).to.equal('/etc/dte/sii-caf-keys/sii-caf-keys.json');
    expect(raw.OAUTH_JWKS_FILE).to.equal('/etc/dte/oauth-jwks/jwks.json');
    // each file is mounted read-only from the existing object named in the values, never rendered
    const pod = podOf(d).spec as unknown as {
      volumes?: {
        name: string;
        configMap?: { name: string; items?: { key: string; path: string }[] };
        secret?: { secretName: string; items?: { key: string; path: string }[] };
      }[];
    };
    const mountOf = (dir: string) => {
      const m = c.volumeMounts?.find((v) => v.mountPath === dir) as { name: string; readOnly?: boolean };
      expect(m, dir).to.be.an('object');
      expect(m.readOnly, dir).to.equal(true);
      return pod.volumes!.find((v) => v.name === m.name)!;
    };
    expect(mountOf('/etc/dte/sii-caf-keys').configMap).to.deep.equal({
      name: 'sii-caf-keys',
      items: [{ key: 'sii-caf-keys.json', path: 'sii-caf-keys.json' }],
    });
    expect(mountOf('/etc/dte/oauth-jwks').secret).to.include({ secretName: 'dte-oauth-jwks' });
    expect(mountOf('/etc/dte/oauth-jwks').secret!.items).to.deep.equal([
      { key: 'jwks.json', path: 'jwks.json' },
    ]);
    // the api's own reader loads them (stand-ins at the mounted paths) and takes its mail settings
    const config = apiConfig(mountedFiles(raw));
    expect(config.siiCafKeys?.cert?.map((k) => k.idk)).to.deep.equal([100]);
    expect(config.oauthJwks?.keys).to.have.length(1);
    expect(config.smtpUrl).to.equal(SECRET_VALUES.SMTP_URL);
    expect(config.mailFrom).to.equal('Facturación <dte@example.cl>');
    expect(config.deliveryIntervalSec).to.equal(60);
    // no other workload mounts them
    for (const svc of SERVICES.filter((x) => x !== 'api')) {
      const other = containerOf(
        byKindName(production, 'Deployment', `${productionValues.fullnameOverride}-${svc}`),
      );
      expect(
        other.volumeMounts?.map((v) => v.mountPath),
        svc,
      ).to.not.include.members(['/etc/dte/sii-caf-keys', '/etc/dte/oauth-jwks']);
    }
    // the default values: no files (the api then refuses to start under NODE_ENV=production), mail from the Secret
    const def = containerOf(byKindName(defaults, 'Deployment', 'dte-dte-service-api'));
    const defConfig = apiConfig(containerEnv(defaults, def, 'dte-secrets', DEFAULT_SECRET));
    expect(defConfig.siiCafKeys).to.equal(undefined);
    expect(defConfig.oauthJwks).to.equal(undefined);
    expect(defConfig.smtpUrl).to.equal(SECRET_VALUES.SMTP_URL);
    expect(defConfig.deliveryIntervalSec).to.equal(30);
  });

  it('gives the webhooks service its WEBHOOKS_* settings, checked by its own reader (production)', () => {
    const c = containerOf(
      byKindName(production, 'Deployment', `${productionValues.fullnameOverride}-webhooks`),
    );
    const config = webhooksConfig(
      containerEnv(production, c, productionValues.secrets.existingSecret, PRODUCTION_SECRET),
    );
    expect(config).to.include({ concurrency: 128, orgConcurrency: 32, retryPartitions: 12 });
    expect(config.retryDelaysMs).to.deep.equal([60_000, 1_800_000, 7_200_000, 43_200_000]);
    expect(config.smtpUrl).to.equal(SECRET_VALUES.SMTP_URL);
  });

  it('knows every environment variable the services read: set by the chart, taken from the Secret, or checked in services.<name>.env', async () => {
    const schema = JSON.parse(fs.readFileSync(path.join(CHART, 'values.schema.json'), 'utf8')) as {
      properties: {
        services: { properties: Record<string, { properties: { env: { properties: object } } }> };
      };
    };
    const known = new Set<string>(
      Object.values(schema.properties.services.properties).flatMap((svc) =>
        Object.keys(svc.properties.env.properties),
      ),
    );
    // what the chart itself renders (both value files, and the optional settings all set) and the Secret's variables
    const optional = await render('dte', [
      '--set',
      'kafka.topicPrefix=t.,sii.simulatorUrl=http://sim:1,sii.certBaseUrl=https://c,sii.prodBaseUrl=https://p',
      '--set',
      'sii.certRegisterUrl=https://cr,sii.prodRegisterUrl=https://pr',
    ]);
    for (const ms of [defaults, production, optional])
      for (const m of ms) {
        if (m.kind === 'ConfigMap') for (const k of Object.keys(m.data ?? {})) known.add(k);
        if (m.kind === 'Deployment' || m.kind === 'Job')
          for (const e of containerOf(m).env ?? []) known.add(e.name);
      }
    for (const k of [
      'KAFKA_SSL_CA_FILE',
      'KAFKA_SSL_CERT_FILE',
      'KAFKA_SSL_KEY_FILE',
      'SCHEMA_REGISTRY_CA_FILE',
    ])
      known.add(k); // with kafka.security.tls / schemaRegistry.tls (asserted above)
    for (const k of ['SCHEMA_REGISTRY_CERT_FILE', 'SCHEMA_REGISTRY_KEY_FILE']) known.add(k);
    // secrets a deployment adds to secretEnv when it uses them (values.yaml secrets.keys says so)
    for (const k of ['EXCHANGE_RATE_PASSWORD', 'MASTER_KEYS_PREVIOUS']) known.add(k);
    // not for a deployment: the simulator, test-only switches, the seed CLI, development tools
    const notDeployed = (name: string) =>
      /^SII_SIMULATOR_/.test(name) ||
      [
        'WEBHOOKS_TEST_CA_FILE',
        'WEBHOOKS_ALLOW_LOOPBACK_RECEIVER',
        'OWNER_PASSWORD',
        'SII_WSDL_DIR',
        'SII_SCHEMAS_DIR',
        'DTE_SCHEMA_ENGINE',
        'CHROMIUM_PATH',
        'PATH',
      ].includes(name);
    const read = new Set<string>();
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const f = path.join(dir, e.name);
        if (e.isDirectory()) walk(f);
        else if (e.name.endsWith('.ts'))
          for (const m of fs
            .readFileSync(f, 'utf8')
            .matchAll(
              /env: '([A-Z][A-Z0-9_]+)'|process\.env\.([A-Z][A-Z0-9_]+)|\benv\.([A-Z][A-Z0-9_]+)|env\['([A-Z][A-Z0-9_]+)'\]/g,
            ))
            read.add((m[1] ?? m[2] ?? m[3] ?? m[4])!);
      }
    };
    for (const top of ['services', 'packages'])
      for (const d of fs.readdirSync(path.join(repoRoot, top))) {
        const src = path.join(repoRoot, top, d, 'src');
        if (d !== 'sii-simulator' && fs.existsSync(src)) walk(src);
      }
    expect(read.size, "the scan found the services' variables").to.be.greaterThan(80);
    const unknown = [...read].filter((n) => !known.has(n) && !notDeployed(n)).sort();
    expect(unknown, 'variables a service reads that the chart can neither set nor check').to.deep.equal([]);
  });

  it('refuses values that would put a secret in the chart or break the services', async () => {
    const refused: [string, string][] = [
      ['postgresql.url=postgres://dte:pw@pg:5432/dte', 'postgresql.url'],
      ['redis.url=redis://:pw@redis:6379', 'redis.url'],
      ['services.signer.env.MASTER_KEY=abc', 'MASTER_KEY'],
      ['secrets.existingSecret=', 'secrets.existingSecret'],
      ['kafka.brokers={kafka}', 'kafka.brokers'],
      ['schemaRegistry.url=registry:8081', 'schemaRegistry.url'],
      ['services.signr.replicas=1', 'signr'],
      // the probes follow services.<name>.healthPort: an env override would move the port away
      [
        'services.signer.env.SIGNER_HEALTH_PORT=4000',
        'services.signer.env.SIGNER_HEALTH_PORT is set by the chart',
      ],
      ['services.api.env.API_HOST=127.0.0.1', 'services.api.env.API_HOST is set by the chart'],
      [
        'services.webhooks.env.HEALTH_HOST=127.0.0.1',
        'services.webhooks.env.HEALTH_HOST is set by the chart',
      ],
      ['services.signer.pdb.maxUnavailable=0', 'services.signer.pdb.maxUnavailable'],
      ['services.signer.autoscaling.minReplicas=0', 'services.signer.autoscaling.minReplicas'],
      ['services.signer.autoscaling.targetCPUUtilizationPercentage=150', 'targetCPUUtilizationPercentage'],
      ['services.signer.autoscaling.consumerLag.consumerGroup=a b', 'consumerGroup'],
      ['services.rcv-sync.autoscaling.consumerLag.enabled=true', 'consumerLag'],
      ['metrics.serviceMonitor.interval=30', 'metrics.serviceMonitor.interval'],
      // each service's variables are known and checked: a typo or a bad value is refused
      ['services.signer.env.SIGNER_CONCURENCY=3', "'SIGNER_CONCURENCY' not allowed"],
      ['services.webhooks.env.WEBHOOKS_TIMEOUT=ten', 'services.webhooks.env.WEBHOOKS_TIMEOUT'],
      ['services.webhooks.env.WEBHOOKS_CONCURRENCY=0', 'services.webhooks.env.WEBHOOKS_CONCURRENCY'],
      ['services.webhooks.env.WEBHOOKS_RETRY_DELAYS=1m', 'services.webhooks.env.WEBHOOKS_RETRY_DELAYS'],
      [
        'services.webhooks.env.WEBHOOKS_ALLOW_LOOPBACK_RECEIVER=true',
        "'WEBHOOKS_ALLOW_LOOPBACK_RECEIVER' not allowed",
      ],
      ['services.api.env.MAIL_FROM=nobody', 'services.api.env.MAIL_FROM'],
      ['services.api.env.MUESTRAS_MAIL_TO=sii', 'services.api.env.MUESTRAS_MAIL_TO'],
      ['services.api.env.DELIVERY_INTERVAL_SEC=-1', 'services.api.env.DELIVERY_INTERVAL_SEC'],
      ['services.api.env.PUBLIC_BASE_URL=https://u:pw@dte.example.cl', 'services.api.env.PUBLIC_BASE_URL'],
      ['services.api.env.MASTER_KEYS_PREVIOUS=old:abc', 'MASTER_KEYS_PREVIOUS'],
      ['services.api.env.SII_CAF_KEYS_FILE=/x', 'services.api.env.SII_CAF_KEYS_FILE is set by the chart'],
      ['services.api.siiCafKeys.configMapName=Bad_Name', 'services.api.siiCafKeys.configMapName'],
      ['services.api.oauthJwks.key=a/b', 'services.api.oauthJwks.key'],
    ];
    for (const [set, mention] of refused) {
      const out = await run(helmBin, ['template', 'dte', CHART, '--set', set]);
      expect(out.code, set).to.not.equal(0);
      // helm >= 3.18 names the value by JSON pointer (/services/signer/env), older ones by dots
      expect(out.stderr.replace(/\//g, '.'), set).to.include(mention);
    }
  });

  it('refuses an autoscaler whose minimum is above its maximum, or without a CPU request to measure against', async () => {
    const inverted = await run(helmBin, [
      'template',
      'dte',
      CHART,
      '--set',
      'services.signer.autoscaling.enabled=true,services.signer.autoscaling.minReplicas=5,services.signer.autoscaling.maxReplicas=3',
    ]);
    expect(inverted.code).to.not.equal(0);
    expect(inverted.stderr).to.include('services.signer.autoscaling: minReplicas 5 is above maxReplicas 3');
    const noRequest = await run(helmBin, [
      'template',
      'dte',
      CHART,
      '--set',
      'services.api.autoscaling.enabled=true,services.api.resources.requests.cpu=null',
    ]);
    expect(noRequest.code).to.not.equal(0);
    expect(noRequest.stderr).to.include('services.api.autoscaling needs services.api.resources.requests.cpu');
  });

  it('NOTES.txt names the Secret and its keys, the migration Job, the api address and the SII in use', async () => {
    // helm template does not print NOTES.txt: render it through tpl in a copy of the chart.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-chart-'));
    try {
      const chart = path.join(dir, 'dte-service');
      fs.cpSync(CHART, chart, { recursive: true });
      fs.copyFileSync(path.join(chart, 'templates/NOTES.txt'), path.join(chart, 'notes.txt'));
      fs.writeFileSync(
        path.join(chart, 'templates/zz-notes.yaml'),
        'kind: Notes\nmetadata: {name: notes}\ntext: {{ tpl (.Files.Get "notes.txt") . | quote }}\n',
      );
      const notes = async (args: string[]) => {
        const out = await run(helmBin, [
          'template',
          'dte',
          chart,
          '-n',
          'dte',
          '--show-only',
          'templates/zz-notes.yaml',
          ...args,
        ]);
        expect(out.code, out.stderr).to.equal(0);
        return (parseYaml(out.stdout) as { text: string }).text;
      };
      const prod = await notes(['-f', PRODUCTION_VALUES]);
      expect(prod).to.include('Secret "dte-prod-secrets"').and.include('master-key').and.include('smtp-url');
      expect(prod).to.include('kubectl -n dte logs job/dte-migrate');
      expect(prod).to.include('http://dte-api.dte.svc:80/api/v1');
      expect(prod).to.include('certification https://maullin.sii.cl, production https://palena.sii.cl');
      expect(prod, 'production verifies CAFs').to.not.include('SII_CAF_KEYS_FILE');
      expect(prod, 'production has its OAuth keys').to.not.include('OAUTH_JWKS_FILE');
      const staging = await notes(['--set', 'sii.simulatorUrl=http://sii-sim:18080']);
      expect(staging).to.include('the simulator at http://sii-sim:18080').and.not.include('palena');
      // without the files the api refuses to start under the chart's NODE_ENV=production: said
      expect(staging, 'no CAF keys: said').to.include('refuses to start').and.include('SII_CAF_KEYS_FILE');
      expect(staging, 'no OAuth keys: said').to.include('OAUTH_JWKS_FILE');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rolls the pods when any configuration changes, and only then', async () => {
    const checksum = (ms: Manifest[]) =>
      podOf(byKindName(ms, 'Deployment', 'dte-dte-service-signer')).metadata.annotations?.['checksum/config'];
    const again = await render('dte');
    const changed = await render('dte', ['--set', 'services.webhooks.env.WEBHOOKS_CONCURRENCY=8']);
    expect(checksum(defaults)).to.be.a('string');
    expect(checksum(again)).to.equal(checksum(defaults));
    expect(checksum(changed)).to.not.equal(checksum(defaults));
  });
});

// ---------------------------------------------------------------- the image's scripts

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const probe = (port: number, probePath: string) =>
  run(process.execPath, [PROBE, String(port), probePath, '2000']);

describe('deploy: the image entrypoint and the exec probe', function () {
  this.timeout(60000);

  let ENTRYPOINT: string;
  let tree: string;
  before(function () {
    this.timeout(300000); // npm run build (tsc -b) when dist/ is older than the sources
    tree = compiledTree();
    ENTRYPOINT = path.join(tree, 'deploy/docker-entrypoint.sh');
  });
  after(() => removeCompiledTree());

  it('the image runs compiled JavaScript with production dependencies only: no tsx, no TypeScript', () => {
    const dockerfile = fs.readFileSync(path.join(repoRoot, 'deploy/Dockerfile'), 'utf8');
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).to.match(/npm ci --omit=dev/);
    expect(runtime).to.not.match(/tsx|typescript/i);
    expect(fs.existsSync(path.join(tree, 'node_modules/tsx'))).to.equal(false);
    expect(fs.existsSync(path.join(tree, 'node_modules/typescript'))).to.equal(false);
    const sources: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        if (e.name === 'node_modules') continue;
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) sources.push(path.relative(tree, p));
      }
    };
    walk(tree);
    expect(sources, 'TypeScript sources in the image tree').to.deep.equal([]);
    // every workspace resolves to its compiled entry point, with a source map beside it
    const main = require.resolve('@dte/engine', { paths: [path.join(tree, 'services/api')] });
    expect(path.relative(tree, fs.realpathSync(main))).to.equal('packages/dte-engine/dist/index.js');
    expect(fs.existsSync(`${fs.realpathSync(main)}.map`)).to.equal(true);
  });

  it('a stack trace of the compiled code names the TypeScript source (source maps)', async () => {
    const out = await run(ENTRYPOINT, ['api'], { env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    expect(out.code).to.equal(1);
    expect(out.stderr).to.include('MASTER_KEY is required');
    expect(out.stderr).to.match(/services\/api\/src\/config\.ts:\d+:\d+/);
  });

  describe('probe.cjs against a real health server', () => {
    let ok: HealthServer;
    let failing: HealthServer;
    before(async () => {
      ok = await startHealthServer(0, [{ name: 'db', check: async () => undefined }]);
      failing = await startHealthServer(0, [
        {
          name: 'kafka',
          check: async () => {
            throw new Error('broker down');
          },
        },
      ]);
    });
    after(async () => {
      await ok?.close();
      await failing?.close();
    });

    it('exits 0 on 200 and 1 on 503 or nothing listening, saying why', async () => {
      expect((await probe(ok.port, '/healthz')).code).to.equal(0);
      expect((await probe(ok.port, '/readyz')).code).to.equal(0);
      expect((await probe(failing.port, '/healthz')).code).to.equal(0);
      const notReady = await probe(failing.port, '/readyz');
      expect(notReady.code).to.equal(1);
      // the probe says which dependency failed; never the error's own text (issue 18: a driver's
      // message can carry hosts, users or values)
      expect(notReady.stderr).to.include('503').and.include('"kafka"').and.include('unavailable');
      expect(notReady.stderr).to.not.include('broker down');
      // the same server answers Prometheus' scrape (what the chart's metrics Service points at)
      const scrape = await fetch(`http://127.0.0.1:${ok.port}/metrics`);
      expect(scrape.status).to.equal(200);
      expect(await scrape.text()).to.match(/^# TYPE process_resident_memory_bytes gauge$/m);
      const closed = await probe(await freePort(), '/healthz');
      expect(closed.code).to.equal(1);
      expect(closed.stderr).to.include('ECONNREFUSED');
    });
  });

  it('refuses an unknown command with exit 64 and hands each known one to its program', async () => {
    const unknown = await run(ENTRYPOINT, ['signr']);
    expect(unknown.code).to.equal(64);
    expect(unknown.stderr).to.include('unknown command "signr"');
    // With an empty environment each program stops at its own configuration check.
    const bare = { PATH: process.env.PATH, HOME: process.env.HOME };
    const expectations: [string, string][] = [
      ['api', 'MASTER_KEY is required'],
      ['webhooks', 'SMTP_URL is required'],
      ['migrate', 'DATABASE_URL is required'],
    ];
    for (const [cmd, message] of expectations) {
      const out = await run(ENTRYPOINT, [cmd], { env: bare });
      expect(out.code, cmd).to.equal(1);
      expect(out.stderr, cmd).to.include(message);
    }
  });

  it('runs a service whose exec probe passes, and SIGTERM reaches it for a graceful exit', async () => {
    const port = await freePort();
    const stack = await testStack();
    const prefix = uniqueTopicPrefix('entrypoint');
    const child = spawn(ENTRYPOINT, ['rcv-sync'], {
      env: {
        ...process.env,
        RCV_SYNC_HEALTH_PORT: String(port),
        LOG_LEVEL: 'warn',
        // rcv-sync reads the database, Redis and Kafka (its own topic prefix here) and opens certificates
        DATABASE_URL: stack.databaseUrl,
        REDIS_URL: stack.redisUrl,
        KAFKA_BROKERS: stack.kafkaBrokers.join(','),
        SCHEMA_REGISTRY_URL: stack.schemaRegistryUrl,
        KAFKA_TOPIC_PREFIX: prefix,
        MASTER_KEY: randomBytes(32).toString('base64'),
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      const deadline = Date.now() + 30000;
      let healthy = false;
      while (!healthy && Date.now() < deadline && child.exitCode === null) {
        healthy = (await probe(port, '/healthz')).code === 0;
        if (!healthy) await new Promise((r) => setTimeout(r, 300));
      }
      expect(healthy, `rcv-sync never answered on ${port}: ${stderr}`).to.equal(true);
      child.kill('SIGTERM');
      expect(await exited, stderr).to.deep.equal({ code: 0, signal: null });
      expect((await probe(port, '/healthz')).code).to.equal(1);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      const admin = createKafka({
        brokers: stack.kafkaBrokers,
        clientId: 'helm-test-cleanup',
        schemaRegistryUrl: stack.schemaRegistryUrl,
        topicPrefix: prefix,
        logLevel: 'nothing',
      });
      await admin.deleteTopics(pipelineTopicSpecs().map((t) => t.name)).catch(() => undefined);
      await admin.disconnect();
    }
  });

  describe('migrate against the test PostgreSQL', () => {
    let schema: FreshSchema | undefined;
    let databaseUrl: string;
    before(async function () {
      this.timeout(240000);
      databaseUrl = (await testStack()).databaseUrl;
      schema = await freshSchema('deploy');
    });
    after(async () => {
      await schema?.drop();
    });

    it('applies the migrations into DATABASE_SCHEMA, then --check says up to date', async () => {
      const env = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: databaseUrl,
        DATABASE_SCHEMA: schema!.name,
      };
      const first = await run(ENTRYPOINT, ['migrate'], { env });
      expect(first.code, first.stderr).to.equal(0);
      expect(first.stdout).to.match(/applied \S+ on .* schema t_/);
      const check = await run(ENTRYPOINT, ['migrate', '--check'], { env });
      expect(check.code, check.stderr).to.equal(0);
      expect(check.stdout).to.include('up to date');
    });
  });
});
