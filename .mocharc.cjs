// One mocha run over every package, service and the cross-cutting tests under test/.
// The summary reporter prints the closing line CI reads: "N passed, N failed".
module.exports = {
  require: ['tsx/cjs', './test/support/mocha-hooks.ts'],
  spec: [
    'packages/*/test/**/*.test.ts',
    'services/*/test/**/*.test.ts',
    'test/**/*.test.ts',
  ],
  reporter: './test/support/summary-reporter.cjs',
  timeout: 60000,
  exit: true,
};
