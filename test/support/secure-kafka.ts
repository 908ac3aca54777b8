/**
 * A Kafka broker of its own with a SASL_SSL listener, for the test that runs the pipeline through
 * a secured broker: a self-made CA (openssl) signs the broker's certificate for 127.0.0.1, the
 * broker reads PEM key and trust stores. Each user can log in with SASL PLAIN (declared in the
 * listener's JAAS line) and with SCRAM-SHA-256 and SCRAM-SHA-512 (credentials written into the
 * cluster metadata when the storage is formatted, `kafka-storage format --add-scram`, as KRaft
 * bootstraps them). The same jars as the local stack (.cache/kafka/libs, scripts/stack.sh fetch);
 * KRaft, one node.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import type { KafkaSecurity, SaslMechanism } from '@dte/messaging';

import { repoRoot } from './env';
import { freePort } from './pipeline-harness';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export class SecureKafka {
  private constructor(
    readonly dir: string,
    readonly port: number,
    readonly caFile: string,
    readonly users: Record<string, string>,
    private readonly child: ChildProcess,
  ) {}

  get brokers(): string[] {
    return [`127.0.0.1:${this.port}`];
  }

  /** The client settings for `user` with that mechanism, and the environment variables the services read. */
  client(
    user: string,
    password = this.users[user]!,
    mechanism: SaslMechanism = 'plain',
  ): { security: KafkaSecurity; env: Record<string, string> } {
    return {
      security: {
        ssl: { ca: fs.readFileSync(this.caFile, 'utf8') },
        sasl: { mechanism, username: user, password },
      },
      env: {
        KAFKA_BROKERS: this.brokers.join(','),
        KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
        KAFKA_SSL_CA_FILE: this.caFile,
        KAFKA_SASL_MECHANISM: mechanism.toUpperCase(),
        KAFKA_SASL_USERNAME: user,
        KAFKA_SASL_PASSWORD: password,
      },
    };
  }

  /**
   * `users` may log in with every mechanism; `scramOnlyUsers` only with SCRAM (no PLAIN entry),
   * so a client of theirs that gets in proves SCRAM was used.
   */
  static async start(
    dir: string,
    plainAndScramUsers: Record<string, string>,
    scramOnlyUsers: Record<string, string> = {},
  ): Promise<SecureKafka> {
    const users = { ...plainAndScramUsers, ...scramOnlyUsers };
    fs.mkdirSync(dir, { recursive: true });
    const ssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    ssl([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '2',
      '-subj',
      '/CN=dte test Kafka CA',
    ]);
    ssl([
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'broker.key',
      '-out',
      'broker.csr',
      '-subj',
      '/CN=127.0.0.1',
    ]);
    fs.writeFileSync(path.join(dir, 'broker.ext'), 'subjectAltName=IP:127.0.0.1\n');
    ssl([
      'x509',
      '-req',
      '-in',
      'broker.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'broker.pem',
      '-days',
      '2',
      '-extfile',
      'broker.ext',
    ]);
    // Kafka's PEM key store: an unencrypted PKCS#8 key followed by the certificate
    ssl(['pkcs8', '-topk8', '-nocrypt', '-in', 'broker.key', '-out', 'broker.pk8']);
    fs.writeFileSync(
      path.join(dir, 'keystore.pem'),
      fs.readFileSync(path.join(dir, 'broker.pk8'), 'utf8') +
        fs.readFileSync(path.join(dir, 'broker.pem'), 'utf8'),
    );
    let port = 0;
    for (let i = 0; i < 20 && !port; i++) {
      const p = await freePort();
      if (p + 1 < 65536 && !(await portOpen(p + 1))) port = p;
    }
    if (!port) throw new Error('no two free consecutive ports for a SASL_SSL Kafka');
    const admin = { admin: `admin-${Math.random().toString(36).slice(2)}` };
    const jaasUsers = Object.entries({ ...plainAndScramUsers, ...admin })
      .map(([u, pw]) => `user_${u}="${pw}"`)
      .join(' ');
    const config = [
      'process.roles=broker,controller',
      'node.id=1',
      `controller.quorum.voters=1@127.0.0.1:${port + 1}`,
      `listeners=SASL_SSL://127.0.0.1:${port},CONTROLLER://127.0.0.1:${port + 1}`,
      `advertised.listeners=SASL_SSL://127.0.0.1:${port}`,
      'controller.listener.names=CONTROLLER',
      'inter.broker.listener.name=SASL_SSL',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL',
      'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol=PLAIN',
      `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${admin.admin}" ${jaasUsers};`,
      // SCRAM: the broker checks against the credentials in the metadata log (added at format)
      'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'ssl.keystore.type=PEM',
      `ssl.keystore.location=${path.join(dir, 'keystore.pem')}`,
      'ssl.truststore.type=PEM',
      `ssl.truststore.location=${path.join(dir, 'ca.pem')}`,
      `log.dirs=${path.join(dir, 'data')}`,
      'num.partitions=1',
      'default.replication.factor=1',
      'min.insync.replicas=1',
      'offsets.topic.replication.factor=1',
      'offsets.topic.num.partitions=4',
      'transaction.state.log.replication.factor=1',
      'transaction.state.log.min.isr=1',
      'auto.create.topics.enable=false',
      'group.initial.rebalance.delay.ms=0',
    ].join('\n');
    fs.writeFileSync(path.join(dir, 'server.properties'), `${config}\n`, { mode: 0o600 });
    const libs = path.join(repoRoot, '.cache', 'kafka', 'libs');
    if (!fs.existsSync(libs)) throw new Error(`no Kafka jars in ${libs}: run bash scripts/stack.sh fetch`);
    const cp = `${libs}/*`;
    const clusterId = Buffer.from(Array.from({ length: 16 }, () => Math.floor(Math.random() * 256))).toString(
      'base64url',
    );
    execFileSync(
      'java',
      [
        '-Xmx256m',
        '-cp',
        cp,
        'kafka.tools.StorageTool',
        'format',
        // one argument: a base64url id may start with '-', which the tool would read as an option
        `--cluster-id=${clusterId}`,
        '-c',
        path.join(dir, 'server.properties'),
        // every user's SCRAM credentials, both hashes (the tool salts and hashes the password)
        ...Object.entries(users).flatMap(([u, pw]) =>
          ['SCRAM-SHA-256', 'SCRAM-SHA-512'].map((m) => `--add-scram=${m}=[name=${u},password=${pw}]`),
        ),
      ],
      {
        stdio: 'pipe',
      },
    );
    const out = fs.openSync(path.join(dir, 'kafka.out'), 'w');
    const child = spawn(
      'java',
      ['-Xms128m', '-Xmx384m', '-XX:+UseG1GC', '-cp', cp, 'kafka.Kafka', path.join(dir, 'server.properties')],
      {
        stdio: ['ignore', out, out],
      },
    );
    const k = new SecureKafka(dir, port, path.join(dir, 'ca.pem'), users, child);
    const deadline = Date.now() + 120_000;
    while (!(await portOpen(port))) {
      if (child.exitCode !== null)
        throw new Error(
          `SASL_SSL Kafka exited: ${fs.readFileSync(path.join(dir, 'kafka.out'), 'utf8').slice(-2000)}`,
        );
      if (Date.now() > deadline) {
        await k.stop();
        throw new Error('SASL_SSL Kafka did not listen within 120 s');
      }
      await sleep(300);
    }
    return k;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}
