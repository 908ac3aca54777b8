/**
 * The tree the image runs, laid out on this machine: `npm run build` (tsc -b, incremental), then
 * scripts/build/assemble.cjs into a temporary folder, whose node_modules holds the production
 * dependencies only (links to this checkout's node_modules for every package-lock.json entry not
 * marked dev, and the workspaces as links to the assembled ones). What the Dockerfile's runtime
 * stage gets from `npm ci --omit=dev`, without a registry: so tsx and TypeScript are absent, and a
 * service that still needed them would fail to start here.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { repoRoot } from './env';

interface LockEntry {
  dev?: boolean;
  link?: boolean;
  resolved?: string;
}

let built: string | undefined;

export function compiledTree(): string {
  if (built) return built;
  execFileSync('bash', ['scripts/build/build.sh'], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'dte-compiled-'));
  execFileSync(process.execPath, ['scripts/build/assemble.cjs', out], { cwd: repoRoot, stdio: 'ignore' });
  const lock = JSON.parse(fs.readFileSync(path.join(out, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  for (const [key, entry] of Object.entries(lock.packages)) {
    // top-level packages, and those npm nested in a workspace's own node_modules
    const m = /^((?:packages|services)\/[^/]+\/)?node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(key);
    if (!m || entry.dev) continue;
    const target = entry.link ? path.join(out, entry.resolved!) : path.join(repoRoot, key);
    if (!fs.existsSync(target)) continue; // an optional dependency of another platform
    const at = path.join(out, m[1] ?? '', 'node_modules', m[2]!);
    fs.mkdirSync(path.dirname(at), { recursive: true });
    fs.symlinkSync(target, at);
  }
  built = out;
  return out;
}

/** Removes the assembled tree (links only point out of it; nothing of the checkout is touched). */
export function removeCompiledTree(): void {
  if (built) fs.rmSync(built, { recursive: true, force: true });
  built = undefined;
}
