/**
 * The resident schema validator: one long-lived child (xmllint-resident.py, Python's standard
 * library driving libxml2.so.2 through ctypes) that compiles each SII schema once and validates
 * file after file, answering exactly what `xmllint --noout --nonet --schema <xsd> -` answers (its
 * exit code and its stderr, byte for byte: same library, same default error handlers). It replaces
 * one xmllint process per file, whose start and schema compilation cost more than validating an
 * envelope of a hundred documents (issue 13; figures in packages/sii-simulator/README.md).
 *
 * Requests are written in order and answered in order (FIFO). The child is started on first use
 * and does not keep the Node process alive while idle. When it cannot start or dies, the
 * requests it had not answered reject with ResidentValidatorGone (schema.ts then runs xmllint for
 * them) and the next request starts a new one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface XmllintAnswer {
  /** xmllint's exit code: 0 valid, 1 not well-formed, 3 invalid, 5 schema did not compile */
  code: number;
  /** what xmllint writes to stderr */
  stderr: string;
}

export class ResidentValidatorGone extends Error {}

const SCRIPT = path.join(__dirname, 'xmllint-resident.py');

interface Pending {
  resolve: (a: XmllintAnswer) => void;
  reject: (e: Error) => void;
}

export class ResidentValidator {
  private child: ChildProcess | undefined;
  private pending: Pending[] = [];
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly python: string) {}

  /** Validates `bytes` against the schema file `xsd` (an absolute path). */
  validate(xsd: string, bytes: Buffer): Promise<XmllintAnswer> {
    if (/[\n]/.test(xsd)) return Promise.reject(new Error('schema path with a line break'));
    const child = this.child ?? this.start();
    return new Promise<XmllintAnswer>((resolve, reject) => {
      this.pending.push({ resolve, reject });
      this.setRef(true);
      child.stdin!.write(Buffer.concat([Buffer.from(`${xsd} ${bytes.length}\n`, 'utf8'), bytes]));
    });
  }

  /** Stops the child (tests; a process exiting also ends it: its stdin closes). */
  close(): void {
    const child = this.child;
    if (child) this.gone(child, new ResidentValidatorGone('resident validator closed'));
    child?.kill();
  }

  private start(): ChildProcess {
    const child = spawn(this.python, [SCRIPT], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.child = child;
    this.buffered = Buffer.alloc(0);
    child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    child.on('error', (err) => this.gone(child, new ResidentValidatorGone(err.message)));
    child.on('exit', (code, signal) =>
      this.gone(child, new ResidentValidatorGone(`resident validator exited (${signal ?? code})`)),
    );
    child.stdin!.on('error', (err) => this.gone(child, new ResidentValidatorGone(err.message)));
    this.setRef(false);
    return child;
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    for (;;) {
      const nl = this.buffered.indexOf(10);
      if (nl < 0) return;
      const m = /^(\d+) (\d+)$/.exec(this.buffered.subarray(0, nl).toString('latin1'));
      if (!m) {
        const child = this.child!;
        this.gone(child, new ResidentValidatorGone('resident validator answered out of protocol'));
        child.kill();
        return;
      }
      const size = Number(m[2]);
      if (this.buffered.length < nl + 1 + size) return;
      const stderr = this.buffered.subarray(nl + 1, nl + 1 + size).toString('utf8');
      this.buffered = this.buffered.subarray(nl + 1 + size);
      const p = this.pending.shift();
      if (this.pending.length === 0) this.setRef(false);
      p?.resolve({ code: Number(m[1]), stderr });
    }
  }

  /** The child failed: every request it had not answered is rejected; the next one starts anew. */
  private gone(child: ChildProcess, err: Error): void {
    if (this.child !== child) return;
    this.child = undefined;
    const pending = this.pending;
    this.pending = [];
    for (const p of pending) p.reject(err);
  }

  /** Keeps the Node process alive only while an answer is awaited. */
  private setRef(ref: boolean): void {
    const c = this.child;
    if (!c) return;
    for (const h of [c, c.stdin, c.stdout] as ({ ref(): void; unref(): void } | null)[]) {
      if (h && typeof h.ref === 'function') {
        if (ref) h.ref();
        else h.unref();
      }
    }
  }
}
