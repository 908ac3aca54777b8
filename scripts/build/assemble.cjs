// Lays out what production runs, from a built checkout (scripts/build/build.sh), into OUT:
//   node scripts/build/assemble.cjs OUT
// OUT gets the root package.json and package-lock.json, each workspace's package.json with
// `main`/`types` pointing at dist/ (devDependencies stay: the lock must match; --omit=dev skips them), each workspace's dist/, the schemas
// (Avro and HTTP JSON Schemas, read at run time), tsconfig-free deploy scripts. No TypeScript
// source and no tsx: `npm ci --omit=dev` in OUT then gives the image's tree (deploy/Dockerfile),
// and test/deploy/compiled-build.test.ts starts a service from such a tree.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const out = path.resolve(process.argv[2] || '');
if (!process.argv[2]) {
  console.error('usage: node scripts/build/assemble.cjs OUT');
  process.exit(64);
}

const copy = (rel) => fs.cpSync(path.join(root, rel), path.join(out, rel), { recursive: true });

fs.mkdirSync(out, { recursive: true });
copy('package.json');
copy('package-lock.json');
copy('schemas');
copy('deploy/docker-entrypoint.sh');
copy('deploy/probe.cjs');
for (const group of ['packages', 'services']) {
  for (const name of fs.readdirSync(path.join(root, group))) {
    const ws = `${group}/${name}`;
    const pkgFile = path.join(root, ws, 'package.json');
    if (!fs.existsSync(pkgFile)) continue;
    if (
      !fs.existsSync(path.join(root, ws, 'dist', 'index.js')) &&
      !fs.existsSync(path.join(root, ws, 'dist', 'main.js'))
    ) {
      console.error(`${ws}/dist is missing: run npm run build first`);
      process.exit(1);
    }
    const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8'));
    const toDist = (p) =>
      p && p.replace(/^(\.\/)?src\//, 'dist/').replace(/\.ts$/, p.endsWith('.d.ts') ? '.ts' : '.js');
    pkg.main = toDist(pkg.main);
    if (pkg.types) pkg.types = pkg.main.replace(/\.js$/, '.d.ts');
    fs.mkdirSync(path.join(out, ws), { recursive: true });
    fs.writeFileSync(path.join(out, ws, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
    fs.cpSync(path.join(root, ws, 'dist'), path.join(out, ws, 'dist'), {
      recursive: true,
      filter: (src) => !src.endsWith('.tsbuildinfo'),
    });
  }
}
console.log(`assembled the compiled tree in ${out}`);
