/**
 * Lines that name a failure in the output of common test runners and compilers. Each is tried
 * on a trimmed line; one that matches is kept, normalised by `normaliseLine`.
 */
const FAILURE_PATTERNS: readonly RegExp[] = [
  // TAP (node --test's tap reporter, tape, prove): `not ok 3 - name`.
  /^not ok\b/,
  // node's spec reporter `✖`, jest's verbose `✕`, vitest `×`, others `✗`.
  /^[✖✕✗×]\s/u,
  // jest's headline per failing test: `● suite › name`.
  /^●\s/u,
  // jest `FAIL src/a.test.js`, go `FAIL\tpkg\t0.01s`, pytest `FAILED tests/a.py::t - …`, pytest `ERROR tests/a.py`.
  /^(?:FAIL|FAILED|ERROR)\s+\S/,
  // go: `--- FAIL: TestName (0.00s)`.
  /^--- FAIL:/,
  // cargo test: `test tests::name ... FAILED`.
  /\s\.\.\.\s+FAILED$/,
  // rustc and cargo: `error[E0308]: …`, `error: could not compile …`; also a TAP block's `error: 'message'`.
  /^error(?:\[[A-Z]?\d+\])?:\s*\S/,
  // An exception's headline: `Error: boom`, `TypeError: …`, `AssertionError [ERR_ASSERTION]: …`, `java.io.IOException: …`.
  /^(?:[\w$]{1,80}\.){0,10}(?:[A-Z]\w{0,80})?(?:Error|Exception)\b(?: \[[\w-]{1,40}\])?(?::|$)/,
  // Rust panics: `thread 'main' panicked at src/main.rs:2:5:`.
  /\bpanicked at\b/,
];

/** Matching lines that only introduce others, or carry nothing of the failure. */
const NOT_FAILURES: readonly RegExp[] = [
  // node's spec reporter heading above the repeated failures.
  /^✖ failing tests:$/u,
  // A YAML block's opening in TAP diagnostics: the message follows on the next lines.
  /^error:\s*[|>][-+]?$/,
  // go and jest print a bare FAIL (or FAILED) besides the lines that name what failed.
  /^FAIL(?:ED)?$/,
];

/** Longer failure lines are cut here: a minified stack or a serialised object is not a name. */
const MAX_LINE_CHARS = 300;
/** Only this much of a line is matched, so a line of a megabyte costs no more than a short one. */
const MATCHED_CHARS = 2_000;

/**
 * Makes a line read the same in every run that fails the same way: trimmed, durations
 * (`(12.3ms)`, `(1.2 s)`, `duration_ms: 5`, go's trailing `0.004s`) and TAP's test numbers
 * (`not ok 3 - x` reads `not ok - x`) removed, runs of white space made one space.
 */
function normaliseLine(line: string): string {
  const normalised = line
    .trim()
    .replace(/\s*\(\d+(?:\.\d+)?\s?(?:ms|s|m)\)/g, '')
    .replace(/\bduration_ms:?\s*\d+(?:\.\d+)?/g, '')
    .replace(/\s+\d+(?:\.\d+)?\s?ms$/, '')
    .replace(/\s+\d+\.\d+s$/, '')
    .replace(/^not ok \d+\b/, 'not ok')
    .replace(/\s+/g, ' ')
    .trim();
  return normalised.length > MAX_LINE_CHARS ? `${normalised.slice(0, MAX_LINE_CHARS - 1)}…` : normalised;
}

function isFailureLine(line: string): boolean {
  const trimmed = line.length > MATCHED_CHARS ? line.slice(0, MATCHED_CHARS) : line;
  return FAILURE_PATTERNS.some((pattern) => pattern.test(trimmed)) && !NOT_FAILURES.some((pattern) => pattern.test(trimmed));
}

/**
 * The lines of a check's output that name failures (failing tests, compile errors, uncaught
 * errors), normalised so one failure reads the same from run to run: the loop compares them to
 * tell a new failure from one already reported, and the planners read them. In order of first
 * appearance, each once, at most `limit`. When no line looks like a failure but there is
 * output, its last non-empty line, normalised (a crashing script's last word); [] for none.
 */
export function failureLines(output: string, limit = 20): string[] {
  const found: string[] = [];
  const seen = new Set<string>();
  let last = '';
  for (const line of output.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '') continue;
    last = trimmed;
    if (found.length >= limit || !isFailureLine(trimmed)) continue;
    const normalised = normaliseLine(trimmed);
    if (normalised === '' || seen.has(normalised)) continue;
    seen.add(normalised);
    found.push(normalised);
  }
  if (found.length > 0 || last === '') return found;
  return limit > 0 ? [normaliseLine(last)] : [];
}

/** The last `lines` non-empty lines of `output`, joined by newlines. */
export function outputTail(output: string, lines = 20): string {
  if (lines <= 0) return '';
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-lines)
    .join('\n');
}
