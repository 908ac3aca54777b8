/**
 * @xmldom/xmldom 0.9.12 compiles a new regular expression on every end tag it parses: its SAX
 * parser checks an end tag's name with `g.reg('^', g.QName_group, g.S_OPT, '$')` (lib/sax.js),
 * and `reg` joins the grammar's sources (a QName pattern with large unicode classes) into a fresh
 * `new RegExp(…, 'u')` each time. On an EnvioDTE that is most of the parse and of the garbage it
 * leaves (3× the CPU of the parse otherwise; issue 13, see packages/sii-simulator/README.md
 * "Performance"; upstream xmldom/xmldom#950).
 *
 * installXmldomGrammarCache() wraps the grammar module's exported `reg` so that a call with the
 * same parts (compared by identity: the grammar's own RegExp constants, or strings) returns the
 * RegExp built the first time. That changes nothing the parser decides: `reg` is a pure function
 * of its parts, the RegExps it returns carry no `g`/`y` flag (so `exec`/`test` keep no state in
 * `lastIndex`), and sax.js only calls `exec`, `test` or reads `source`/`flags` on them. Only calls
 * made as `grammar.reg(…)` (how sax.js calls it) whose parts are all strings or RegExps exported
 * by the grammar module are cached, so the cache is bounded by the parser's few call sites; any
 * other call goes to the original. test/xmldom-grammar-cache.test.ts parses well-formed and
 * malformed documents with and without the cache and requires the same trees and errors.
 */
// xmldom has no typings for its grammar module; it is a plain CommonJS module of RegExps and helpers
// eslint-disable-next-line @typescript-eslint/no-require-imports
const grammar = require('@xmldom/xmldom/lib/grammar') as {
  reg: (...parts: (RegExp | string)[]) => RegExp;
  [name: string]: unknown;
};

type Reg = (this: unknown, ...parts: (RegExp | string)[]) => RegExp;

const originalReg: Reg = grammar.reg as Reg;
/** the grammar's exported RegExps: the only objects accepted as cache keys */
const grammarRegExps = new Set<RegExp>(
  Object.values(grammar).filter((v): v is RegExp => v instanceof RegExp),
);
const RESULT = Symbol('result');
type Node = Map<RegExp | string | typeof RESULT, unknown>;

let root: Node = new Map();

function cachedReg(this: unknown, ...parts: (RegExp | string)[]): RegExp {
  if (this !== grammar || !parts.every((p) => typeof p === 'string' || grammarRegExps.has(p)))
    return originalReg.apply(this, parts);
  let node = root;
  for (const p of parts) {
    let next = node.get(p) as Node | undefined;
    if (!next) {
      next = new Map();
      node.set(p, next);
    }
    node = next;
  }
  let re = node.get(RESULT) as RegExp | undefined;
  if (!re) {
    re = originalReg.apply(this, parts);
    // a global or sticky RegExp would carry lastIndex from one use to the next: never shared
    if (re.global || re.sticky) return re;
    node.set(RESULT, re);
  }
  return re;
}

/** Installs the cache (idempotent). Done when this module is loaded by xml/dom.ts. */
export function installXmldomGrammarCache(): void {
  grammar.reg = cachedReg;
}

/** For the equivalence test only: the parser as published, and an emptied cache. */
export function uninstallXmldomGrammarCache(): void {
  grammar.reg = originalReg;
  root = new Map();
}

export function xmldomGrammarCacheInstalled(): boolean {
  return grammar.reg === cachedReg;
}

installXmldomGrammarCache();
