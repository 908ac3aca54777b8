// The pipeline through a secured Kafka: a broker of its own with only a SASL_SSL listener (a CA
// made here with openssl; users for SASL PLAIN and SCRAM-SHA-256/512), and the real processes (api
// with its relay and projector, signer, sii-uploader, sii-poller) configured only by the
// environment variables of @dte/messaging (KAFKA_SECURITY_PROTOCOL, KAFKA_SSL_CA_FILE,
// KAFKA_SASL_*). The pipeline logs in with SCRAM-SHA-512 (the production example's mechanism) as a
// user that has no PLAIN password, so only SCRAM can let it in; PLAIN and SCRAM-SHA-256 are proven
// with the messaging client on the same broker. Documents reach their verdict; a client without
// TLS/SASL, with a wrong password, or with a mechanism its user has no credential for gets nothing.
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { expect } from 'chai';

import { createKafka } from '@dte/messaging';

import { testStack } from '../support/env';
import { emissionBody, startPipelineProcesses, type RunningPipeline } from '../support/pipeline-harness';
import { SecureKafka } from '../support/secure-kafka';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Kafka over SASL_SSL: the pipeline runs through a broker that wants TLS and a password', function () {
  this.timeout(300_000);
  let dir: string;
  let kafka: SecureKafka;
  let p: RunningPipeline;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-sasl-ssl-'));
    kafka = await SecureKafka.start(
      dir,
      { dte: `pw-${randomBytes(8).toString('hex')}` },
      { 'dte-scram': `pw-${randomBytes(8).toString('hex')}` },
    );
    const client = kafka.client('dte-scram', undefined, 'scram-sha-512');
    p = await startPipelineProcesses({
      label: 'saslssl',
      externalKafka: { brokers: kafka.brokers, security: client.security },
      env: { ...client.env, UPLOAD_MAX_WAIT_MS: '200', POLL_FIRST_DELAY_MS: '200', POLL_TICK_MS: '100' },
    });
  });
  after(async () => {
    await p?.close();
    await kafka?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('issues documents that reach their verdict, every hop over SASL_SSL with SCRAM-SHA-512', async () => {
    const co = await p.seedCompany({ tipos: [33], folios: 5 });
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${p.apiUrl}/dtes`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${co.key}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': randomUUID(),
          'X-Cert-Id': co.certId,
        },
        body: JSON.stringify(emissionBody(33, co.rut, 1000 + i)),
      });
      const body = (await res.json()) as { id: string };
      expect(res.status, JSON.stringify(body)).to.equal(202);
      ids.push(body.id);
    }
    const deadline = Date.now() + 150_000;
    let rows: { id: string; sii_status: string }[] = [];
    for (;;) {
      rows = await p.db.dataSource.query('SELECT id, sii_status FROM dtes WHERE id = ANY($1::uuid[])', [ids]);
      if (rows.length === ids.length && rows.every((r) => r.sii_status === 'EPR')) break;
      if (Date.now() > deadline) throw new Error(`not every document reached EPR: ${JSON.stringify(rows)}`);
      await sleep(300);
    }
    // the services read the secured settings from the environment, nothing else
    for (const svc of ['api', 'signer', 'sii-uploader', 'sii-poller'])
      expect(fs.readFileSync(path.join(p.logDir, `${svc}.log`), 'utf8'), svc).to.not.include(
        kafka.users['dte-scram']!,
      );
  });

  it('lets in PLAIN and SCRAM-SHA-256 clients with their credentials, and refuses a mechanism the user has none for', async () => {
    const s = await testStack();
    const login = async (
      user: string,
      mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512',
      password?: string,
    ) => {
      const k = createKafka({
        brokers: kafka.brokers,
        clientId: `login-${mechanism}`,
        schemaRegistryUrl: s.schemaRegistryUrl,
        logLevel: 'nothing',
        kafkaSecurity: kafka.client(user, password, mechanism).security,
      });
      try {
        return await Promise.race([
          k.checkBrokers().then(() => 'in'),
          sleep(20_000).then(() => 'no answer'),
        ]).catch((e: Error) => `refused: ${e.message}`);
      } finally {
        await k.disconnect().catch(() => undefined);
      }
    };
    expect(await login('dte', 'plain')).to.equal('in');
    expect(await login('dte', 'scram-sha-256')).to.equal('in');
    expect(await login('dte-scram', 'scram-sha-256')).to.equal('in');
    // no PLAIN password for the SCRAM-only user: the pipeline above could only have used SCRAM
    expect(await login('dte-scram', 'plain')).to.match(/^refused/);
    const wrong = await login('dte-scram', 'scram-sha-512', 'not-the-password');
    expect(wrong).to.match(/^refused/);
    expect(wrong).to.not.include('not-the-password');
  });

  it('refuses a client without TLS and SASL, and one with a wrong password', async () => {
    const s = await testStack();
    const base = {
      brokers: kafka.brokers,
      clientId: 'intruder',
      schemaRegistryUrl: s.schemaRegistryUrl,
      logLevel: 'nothing' as const,
    };
    const plain = createKafka(base);
    const wrong = createKafka({ ...base, kafkaSecurity: kafka.client('dte', 'not-the-password').security });
    const within = <T>(pr: Promise<T>, ms: number) =>
      Promise.race([pr, sleep(ms).then(() => Promise.reject(new Error(`no answer within ${ms} ms`)))]);
    try {
      const e1 = await within(plain.checkBrokers(), 20_000).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(e1, 'plaintext client refused').to.be.instanceOf(Error);
      const e2 = await within(wrong.checkBrokers(), 20_000).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(e2, 'wrong password refused').to.be.instanceOf(Error);
      expect(String(e2?.message)).to.not.include('not-the-password');
    } finally {
      await plain.disconnect().catch(() => undefined);
      await wrong.disconnect().catch(() => undefined);
    }
  });
});
