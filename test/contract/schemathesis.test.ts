// Contract fuzzing: schemathesis (PyPI, pinned) generates requests from the api's own
// /openapi.json and sends them to a real api (PostgreSQL, Redis, the SII simulator) with a valid
// API key; the run fails on any 5xx (not_a_server_error) or an answer that does not match the
// documented status codes and schemas. The stateful phase follows the document's OpenAPI links
// (services/api/src/openapi-links.ts) from each create to the reads and actions on what it
// created; the test reads schemathesis' NDJSON report and requires that those linked calls got
// 2xx answers (real ids, not only 404s) and that a share of the bodies generated for POST /dtes,
// /webhooks, /caf and /certificates were accepted. Two runs: every operation in every phase, then
// the stateful phase alone over those four creates and their links. schemathesis_hooks.py teaches
// it the format "rut", mixes real signed CAF and .p12 files into the multipart bodies and the
// document's own examples into the DTE bodies, and gives each valid request a fresh
// Idempotency-Key; the config gives the company's RUT as rut_emisor, today as fecha_emision and
// public IP webhook URLs (this sandbox resolves no names).
// schemathesis lives in a virtualenv under .cache/ made on first use (python3 -m venv; pip
// install). Outside CI, without python3-venv or PyPI, the test is reported as pending with the
// reason; in CI that is a failure.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { expect } from 'chai';
import { CATALOG } from '@dte/error-catalog';
import { createTestCaf, createTestP12, santiagoDate } from '@dte/engine';

import { orgWithCafs, type DteOrg } from '../../services/api/test/dtes-fixtures';
import { call, startTestApi, type TestApi } from '../../services/api/test/support/test-api';
import { CREATE_LINKS } from '../../services/api/src/openapi-links';
import { repoRoot } from '../support/env';

const execFileP = promisify(execFile);
const SCHEMATHESIS = 'schemathesis==4.32.5';
const VENV = path.join(repoRoot, '.cache', 'schemathesis-venv');
// run as a module: the venv's `st` script names the python of the path the venv was made at
const PYTHON = path.join(VENV, 'bin', 'python3');
const ST_ARGS = ['-m', 'schemathesis.cli'];
const HOOKS_DIR = __dirname;

function ensureSchemathesis(): string | undefined {
  try {
    if (!fs.existsSync(PYTHON)) {
      execFileSync('python3', ['-m', 'venv', VENV], { stdio: 'pipe' });
      execFileSync(path.join(VENV, 'bin', 'pip'), ['install', '-q', SCHEMATHESIS], {
        stdio: 'pipe',
        timeout: 300_000,
      });
    }
    execFileSync(PYTHON, [...ST_ARGS, '--version'], { stdio: 'pipe' });
    return undefined;
  } catch (err) {
    return `schemathesis could not be installed into ${VENV}: ${(err as Error).message.split('\n')[0]}`;
  }
}

/** One request schemathesis sent, as its NDJSON report records it. */
interface SentCase {
  op: string;
  phase: string;
  mode: string;
  /** the body's own mode: a case is negative when any part is, its body may still be positive */
  bodyMode?: string;
  status: number;
  /** the OpenAPI link that produced it (stateful phase), e.g. `POST /dtes -> [202] GetDte -> GET /dtes/{id}` */
  link?: string;
  inferred?: boolean;
  applied?: boolean;
}

type Recorder = {
  cases?: Record<
    string,
    {
      value: {
        method: string;
        path: string;
        meta?: {
          phase?: { name: string };
          generation?: { mode: string };
          components?: { body?: { mode: string } };
        };
      };
      transition?: { id: string; is_inferred?: boolean };
      is_transition_applied?: boolean;
    }
  >;
  interactions?: Record<string, { response?: { status_code: number } | null }>;
};

/** Every case of the NDJSON event stream with its answer's status. */
export function sentCases(ndjson: string): SentCase[] {
  const out: SentCase[] = [];
  for (const line of ndjson.split('\n')) {
    if (!line.startsWith('{"ScenarioFinished"')) continue;
    const ev = JSON.parse(line) as { ScenarioFinished: { recorder: Recorder } };
    const r = ev.ScenarioFinished.recorder;
    for (const [id, c] of Object.entries(r.cases ?? {})) {
      const status = r.interactions?.[id]?.response?.status_code;
      if (status === undefined) continue;
      out.push({
        op: `${c.value.method} ${c.value.path}`,
        phase: c.value.meta?.phase?.name ?? '?',
        mode: c.value.meta?.generation?.mode ?? '?',
        bodyMode: c.value.meta?.components?.body?.mode,
        status,
        ...(c.transition
          ? {
              link: c.transition.id,
              inferred: c.transition.is_inferred === true,
              applied: c.is_transition_applied,
            }
          : {}),
      });
    }
  }
  return out;
}

type OpenApiDoc = {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody: {
          content: Record<string, { examples: Record<string, { value: Record<string, unknown> }> }>;
        };
      }
    >
  >;
};

/** "a.b" TOML basic string (JSON's escapes are TOML's). */
const toml = (v: string) => JSON.stringify(v);

describe('contract: schemathesis against /openapi.json of a running api', function () {
  this.timeout(600_000);
  let t: TestApi;
  let o: DteOrg;
  let unavailable: string | undefined;
  let work: string;

  before(async function () {
    this.timeout(600_000);
    unavailable = ensureSchemathesis();
    if (unavailable && !process.env.CI) return this.skip();
    t = await startTestApi();
    // the company of the document's POST /dtes examples (their rut_emisor), with a CAF of each
    // example's type, so the examples schemathesis sends and mixes into its bodies can be issued,
    // and folios enough for every emission of the run
    o = await orgWithCafs(t, { rut: '76086428-5', tipos: [33, 34, 46, 110], hasta: 3000 });
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-schemathesis-'));
    // the document's own POST /dtes examples (schemathesis_hooks.py mixes them into the bodies);
    // read before the .p12 keys are made, which hold the event loop for seconds
    const doc = (await call<OpenApiDoc>(t.url, 'GET', '/openapi.json')).body;
    const dteExamples = Object.values(
      doc.paths['/dtes'].post.requestBody.content['application/json'].examples,
    ).map((e) => ({ ...e.value, ...('rut_emisor' in e.value ? { rut_emisor: o.rut } : {}) }));
    expect(dteExamples.length).to.be.greaterThan(0);
    // real signed files for the multipart creates (schemathesis_hooks.py mixes them in): CAFs of
    // the company, each another range, and .p12 files of its RUT, each another key
    // each of the two runs gets files of its own (each run's hooks take them in order; a .p12
    // takes about 0.7 s to make here)
    let range = 10_001;
    const caf = () => {
      const xml = createTestCaf({
        siiKey: t.sim.siiKeys.cert,
        rutEmisor: o.rut,
        razonSocial: 'EMPRESA DE PRUEBA',
        tipoDte: 33,
        desde: range,
        hasta: range + 99,
        fechaAutorizacion: santiagoDate(new Date()),
        keyBits: 512,
      });
      range += 100;
      return xml;
    };
    let n = 0;
    const p12 = () => {
      n += 1;
      return {
        p12: createTestP12({ rut: o.rut, password: `clave-${n}` }).toString('base64'),
        password: `clave-${n}`,
      };
    };
    for (const [run, count] of [
      [1, 24],
      [2, 20],
    ]) {
      fs.writeFileSync(
        path.join(work, `fixtures-${run}.json`),
        JSON.stringify({
          cafs: Array.from({ length: count * 2 }, caf),
          certificates: Array.from({ length: count }, p12),
          dte_examples: dteExamples,
        }),
      );
    }
  });
  after(async () => t?.close());

  it('finds no 5xx, follows the links to real ids and gets generated creates accepted', async () => {
    expect(unavailable, unavailable).to.equal(undefined);
    // the spec's own 5xx answers (upstream SII failures: 502, 503; not wired: 501) are documented
    // outcomes, not server errors; a 500 (internal_error) always fails the run
    const specStatuses = [...new Set(CATALOG.map((e) => e.http).filter((st) => st > 500))].sort();
    const config = path.join(work, 'schemathesis.toml');
    // public IP literals: the registration check resolves names, and this sandbox resolves none
    const webhookUrls = ['https://1.1.1.1/dte', 'https://8.8.8.8/hooks/dte', 'https://9.9.9.9/webhook'];
    fs.writeFileSync(
      config,
      [
        // expected-statuses lists what the check accepts: every non-5xx class and the spec's 5xx
        '[checks.not_a_server_error]',
        `expected-statuses = [${['1XX', '2XX', '3XX', '4XX', ...specStatuses.map(String)].map(toml).join(', ')}]`,
        '',
        // more stateful scenarios than cases per operation: each is a chain of linked calls
        '[phases.stateful]',
        'generation = { max-examples = 100 }',
        '',
        '[dictionaries.webhook_urls]',
        `values = [${webhookUrls.map(toml).join(', ')}]`,
        '',
        // the API key's company is the only emisor it may name (else emisor_rut_mismatch),
        // fecha_emision lies in a window around today (America/Santiago: a clock no schema has),
        // and the certificate to sign with (the run uploads others; with several, X-Cert-Id is due)
        '[[operations]]',
        'include-name-regex = "^POST /dtes(/preview)?$"',
        `parameters = { "body.rut_emisor" = ${toml(o.rut)}, "body.fecha_emision" = ${toml(santiagoDate(new Date()))}, "header.X-Cert-Id" = ${toml(o.certId)} }`,
        '',
        // the CAFs and the certificate the emissions use are not deleted by guessed ids before the
        // fuzzing of POST /dtes: these deletes run in the stateful phase, through the links
        '[[operations]]',
        'include-name-regex = "^DELETE /(caf|certificates)/\\\\{id\\\\}$"',
        'phases = { coverage = { enabled = false }, fuzzing = { enabled = false } }',
        '',
        // more cases for the four creates the test measures (15 leaves a handful of positive bodies)
        '[[operations]]',
        'include-name-regex = "^POST /(dtes|webhooks|caf|certificates)$"',
        'generation = { max-examples = 40 }',
        '',
        '[[operations]]',
        'include-name = "POST /webhooks"',
        'parameters = { "body.url" = { dictionary = "webhook_urls", probability = 0.6 } }',
        '',
      ].join('\n'),
    );
    const reportDir = path.join(work, 'report');
    const st = (run: number, extra: string[]) =>
      // run outside the repository: schemathesis keeps a .schemathesis/ cache in its working directory
      execFileP(
        PYTHON,
        [
          ...ST_ARGS,
          '--config-file',
          config,
          'run',
          `${t.url}/openapi.json`,
          '--url',
          t.url,
          '--header',
          `Authorization: Bearer ${o.key}`,
          '--checks',
          'not_a_server_error,status_code_conformance,response_schema_conformance',
          '--seed',
          '17',
          '--no-color',
          '--report',
          'ndjson,json',
          '--report-dir',
          reportDir,
          ...extra,
        ],
        {
          cwd: work,
          maxBuffer: 32 * 1024 * 1024,
          timeout: 480_000,
          env: {
            ...process.env,
            PYTHONPATH: HOOKS_DIR,
            SCHEMATHESIS_HOOKS: 'schemathesis_hooks',
            DTE_ST_FIXTURES: path.join(work, `fixtures-${run}.json`),
          },
        },
      ).then(
        (r) => ({ code: 0, text: r.stdout + r.stderr }),
        (e: { code?: number; stdout?: string; stderr?: string }) => ({
          code: e.code ?? 1,
          text: `${e.stdout ?? ''}${e.stderr ?? ''}`,
        }),
      );
    // 1. every operation, every phase
    const out = await st(1, ['--max-examples', process.env.SCHEMATHESIS_MAX_EXAMPLES ?? '15']);
    expect(out.code, out.text.slice(-6000)).to.equal(0);
    // it really generated and sent cases, the stateful phase included
    const generated = Number(/(\d+) generated/.exec(out.text)?.[1] ?? 0);
    expect(generated, out.text.slice(-3000)).to.be.greaterThan(100);
    expect(out.text).to.match(/Stateful/);
    // 2. the stateful phase again, once per create, over that create and the operations its
    // links name only (POST /dtes also with GET /certificates, from which schemathesis takes the
    // certificate_id its body names), so its scenarios start at the create and walk its links
    // instead of spreading over sixty-odd operations
    const creates = ['emitDte', 'createWebhook', 'uploadCaf', 'uploadCertificate'];
    for (const from of creates) {
      const ids = [from, ...CREATE_LINKS.find((l) => l.from === from)!.to];
      if (from === 'emitDte') ids.push('listCertificates');
      const focused = await st(2, [
        '--phases',
        'stateful',
        '--max-examples',
        '30',
        ...ids.flatMap((id) => ['--include-operation-id', id]),
      ]);
      expect(focused.code, `${from}: ${focused.text.slice(-6000)}`).to.equal(0);
    }

    // every run's NDJSON event stream (one file each)
    const ndjsons = fs.readdirSync(reportDir).filter((f) => f.endsWith('.ndjson'));
    expect(ndjsons, `NDJSON reports in ${reportDir}`).to.have.length(1 + creates.length);
    const cases = ndjsons.flatMap((f) => sentCases(fs.readFileSync(path.join(reportDir, f), 'utf8')));
    const ok = (c: SentCase) => c.status >= 200 && c.status < 300;
    const report: string[] = [];

    // a share of the bodies generated for each create (fuzzing and stateful phases, body valid
    // per the schema) was accepted. The coverage phase is reported, not held to it: it walks each
    // field's boundaries with one Idempotency-Key and one date for hundreds of bodies.
    const ratio = (list: SentCase[]) => `${list.filter(ok).length}/${list.length}`;
    for (const op of ['POST /dtes', 'POST /webhooks', 'POST /caf', 'POST /certificates']) {
      const positive = cases.filter((c) => c.op === op && c.bodyMode === 'positive');
      // requests valid per the document in all their parts (a body sent without its required
      // Idempotency-Key is a negative case)
      const generatedBodies = positive.filter(
        (c) => c.mode === 'positive' && (c.phase === 'fuzzing' || c.phase === 'stateful'),
      );
      const accepted = generatedBodies.filter(ok).length;
      report.push(
        `${op}: accepted ${ratio(generatedBodies)} generated (fuzzing, stateful), ` +
          `${ratio(positive.filter((c) => c.phase === 'coverage'))} coverage, ${ratio(cases.filter((c) => c.op === op && c.phase === 'examples'))} examples`,
      );
      expect(generatedBodies.length, op).to.be.greaterThan(10);
      expect(accepted / generatedBodies.length, report.at(-1)).to.be.at.least(0.1);
    }

    // the stateful phase followed the document's own links (not inferred ones) from those
    // creates, with the id they answered, and the linked calls reached it: 2xx
    const linked = cases.filter((c) => c.phase === 'stateful' && c.link && !c.inferred && c.applied);
    for (const [create, targets] of Object.entries({
      'POST /dtes': ['GET /dtes/{id}', 'GET /dtes/{id}/xml', 'GET /dtes/{id}/events'],
      'POST /webhooks': [
        'DELETE /webhooks/{id}',
        'POST /webhooks/{id}/test',
        'POST /webhooks/{id}/rotate-secret',
      ],
      'POST /caf': ['DELETE /caf/{id}'],
      'POST /certificates': ['DELETE /certificates/{id}', 'POST /certificates/{id}/activate'],
    })) {
      const followed = linked.filter((c) => c.link!.startsWith(`${create} -> `));
      const reached = followed.filter((c) => targets.includes(c.op) && ok(c));
      report.push(`${create} links: ${reached.length}/${followed.length} followed calls answered 2xx`);
      expect(
        reached.length,
        `${create}: ${followed.map((c) => `${c.op} ${c.status}`).join(', ')}`,
      ).to.be.greaterThan(0);
    }
    const summary = [...out.text.matchAll(/^=+ (.*) =+\s*$/gm)].at(-1)?.[1] ?? '';
    console.log(`      schemathesis: ${summary} (${generated} cases)\n      ${report.join('\n      ')}`);
  });
});
