// Root hooks shared by every test file. Kept empty of stack start-up: the stack is brought up
// by scripts/test.sh before mocha starts, and tests read its endpoints from test/support/env.ts.
export const mochaHooks = {};
