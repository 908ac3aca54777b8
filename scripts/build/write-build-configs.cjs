// Writes each workspace's tsconfig.build.json (src -> dist, composite, referencing the workspaces
// it depends on) and the root tsconfig.build.json that `tsc -b` builds. The references come from
// each package.json's @dte/* dependencies, so a new dependency only needs this script run again:
//   node scripts/build/write-build-configs.cjs [--check]
// --check writes nothing and exits 1 when a file differs from what it would write (CI's lint).
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const check = process.argv.includes('--check');
const dirs = ['packages', 'services'].flatMap((d) =>
  fs
    .readdirSync(path.join(root, d))
    .map((n) => `${d}/${n}`)
    .filter((p) => fs.existsSync(path.join(root, p, 'package.json'))),
);
const byName = new Map(dirs.map((d) => [require(path.join(root, d, 'package.json')).name, d]));
const stale = [];

const written = [];

// Compared by content, not text: prettier (run on what this writes) lays the JSON out its own way.
function write(rel, value) {
  const file = path.join(root, rel);
  const now = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null;
  if (now !== null && JSON.stringify(JSON.parse(now)) === JSON.stringify(value)) return;
  if (check) stale.push(rel);
  else {
    fs.writeFileSync(file, JSON.stringify(value, null, 2) + '\n');
    written.push(rel);
  }
}

for (const dir of dirs) {
  const pkg = require(path.join(root, dir, 'package.json'));
  const deps = Object.keys({ ...pkg.dependencies }).filter((n) => byName.has(n));
  write(`${dir}/tsconfig.build.json`, {
    extends: '../../tsconfig.base.json',
    compilerOptions: {
      rootDir: 'src',
      outDir: 'dist',
      composite: true,
      declaration: true,
      declarationMap: true,
      sourceMap: true,
      inlineSources: true,
      types: ['node'],
      tsBuildInfoFile: 'dist/.tsbuildinfo',
    },
    include: ['src/**/*.ts'],
    references: deps
      .sort()
      .map((n) => ({ path: `${path.relative(dir, byName.get(n))}/tsconfig.build.json` })),
  });
}
write('tsconfig.build.json', {
  files: [],
  references: [...dirs].sort().map((d) => ({ path: `${d}/tsconfig.build.json` })),
});
if (written.length) {
  require('node:child_process').execFileSync('npx', ['prettier', '--write', ...written], {
    cwd: root,
    stdio: 'ignore',
  });
}
if (stale.length) {
  console.error(
    `build configs out of date (node scripts/build/write-build-configs.cjs): ${stale.join(', ')}`,
  );
  process.exit(1);
}
