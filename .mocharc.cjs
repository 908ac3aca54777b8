// One mocha run over every package, service and the cross-cutting tests under test/.
// The summary reporter prints the closing line CI reads: "N passed, N failed".
// Spec files given on the command line replace the default globs (mocha would merge them).
const explicitSpecs = process.argv.slice(2).some((a) => !a.startsWith('-') && /\.(ts|js)$|\*/.test(a));

module.exports = {
  require: ['tsx/cjs', './test/support/mocha-hooks.ts'],
  ...(explicitSpecs
    ? {}
    : { spec: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'] }),
  reporter: './test/support/summary-reporter.cjs',
  timeout: 60000,
  exit: true,
};
