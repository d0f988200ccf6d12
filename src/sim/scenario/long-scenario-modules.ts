import type { JsonValue, SpecModule } from '../../spec/colony-spec.js';

/**
 * The modules of the long scenario: small, real functions of a dozen kinds, each kind with
 * its own constants drawn from the module's number, so the same number always gives the same
 * module and neighbours differ. The expected answers are computed here, in TypeScript, from
 * the same constants the body uses, so a wrong body would fail its own tests.
 */

interface Kind {
  /** The function name's stem; the module's number follows it (`shift0007`). */
  readonly stem: string;
  readonly params: readonly string[] | null;
  body(n: number): string | null;
  cases(n: number): readonly (readonly [readonly JsonValue[], JsonValue])[];
}

const PAIRS = [
  ['(', ')'],
  ['[', ']'],
  ['<', '>'],
  ['{', '}'],
  ['«', '»'],
] as const;
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

function pairOf(n: number): readonly [string, string] {
  return PAIRS[n % PAIRS.length] ?? ['(', ')'];
}

function letterOf(n: number): string {
  return LETTERS[n % LETTERS.length] ?? 'a';
}

const KINDS: readonly Kind[] = [
  {
    stem: 'shift',
    params: ['value'],
    body: (n) => `return value + ${1 + (n % 17)};`,
    cases: (n) => [
      [[2], 3 + (n % 17)],
      [[-(1 + (n % 17))], 0],
    ],
  },
  {
    stem: 'scale',
    params: ['value'],
    body: (n) => `return value * ${2 + (n % 7)};`,
    cases: (n) => [
      [[3], 3 * (2 + (n % 7))],
      [[-2], -2 * (2 + (n % 7))],
    ],
  },
  {
    stem: 'clampRange',
    params: ['value'],
    body: (n) => `return Math.min(Math.max(value, ${n % 5}), ${(n % 5) + 10 + (n % 13)});`,
    cases: (n) => [
      [[(n % 5) - 3], n % 5],
      [[(n % 5) + 50], (n % 5) + 10 + (n % 13)],
      [[(n % 5) + 1], (n % 5) + 1],
    ],
  },
  {
    stem: 'repeatText',
    params: ['text'],
    body: (n) => `return String(text).repeat(${1 + (n % 3)});`,
    cases: (n) => [
      [['ab'], 'ab'.repeat(1 + (n % 3))],
      [[''], ''],
    ],
  },
  {
    stem: 'surround',
    params: ['text'],
    body: (n) => `return ${JSON.stringify(pairOf(n)[0])} + text + ${JSON.stringify(pairOf(n)[1])};`,
    cases: (n) => [
      [['x'], `${pairOf(n)[0]}x${pairOf(n)[1]}`],
      [[''], `${pairOf(n)[0]}${pairOf(n)[1]}`],
    ],
  },
  {
    stem: 'sumAbove',
    params: ['values'],
    body: (n) => `return values.filter((value) => value > ${n % 6}).reduce((sum, value) => sum + value, 0);`,
    cases: (n) => [
      [[[1, 2, 3, 4, 5, 6, 7, 8]], [1, 2, 3, 4, 5, 6, 7, 8].filter((value) => value > n % 6).reduce((sum, value) => sum + value, 0)],
      [[[]], 0],
    ],
  },
  {
    stem: 'countLetter',
    params: ['text'],
    body: (n) => `return [...text].filter((char) => char === ${JSON.stringify(letterOf(n))}).length;`,
    cases: (n) => [
      [[`${letterOf(n)}-${letterOf(n)}${letterOf(n)}`], 3],
      [['...'], 0],
    ],
  },
  {
    stem: 'takeFirst',
    params: ['values'],
    body: (n) => `return values.slice(0, ${1 + (n % 4)});`,
    cases: (n) => [
      [[[9, 8, 7, 6, 5]], [9, 8, 7, 6, 5].slice(0, 1 + (n % 4))],
      [[[1]], [1]],
    ],
  },
  {
    stem: 'isMultipleOf',
    params: ['value'],
    body: (n) => `return value % ${2 + (n % 9)} === 0;`,
    cases: (n) => [
      [[3 * (2 + (n % 9))], true],
      [[3 * (2 + (n % 9)) + 1], false],
    ],
  },
  {
    // No body: the function answers exactly its cases, the way a lookup table does.
    stem: 'codeFor',
    params: ['name'],
    body: () => null,
    cases: (n) => [
      [['alpha'], 100 + n],
      [['beta'], 200 + n],
      [['gamma'], 300 + n],
    ],
  },
  {
    stem: 'pickKeys',
    params: ['record'],
    body: (n) => `return Object.fromEntries(Object.entries(record).filter(([key]) => key.startsWith(${JSON.stringify(letterOf(n))})));`,
    cases: (n) => [
      [[{ [`${letterOf(n)}1`]: 1, zz: 2, [`${letterOf(n)}2`]: 3 }], letterOf(n) === 'z' ? { z1: 1, zz: 2, z2: 3 } : { [`${letterOf(n)}1`]: 1, [`${letterOf(n)}2`]: 3 }],
      [[{}], {}],
    ],
  },
  {
    stem: 'initials',
    params: ['text'],
    body: (n) => `return text.split(' ').filter((word) => word.length > 0).map((word) => word[0]).join(${JSON.stringify(n % 2 === 0 ? '' : '.')});`,
    cases: (n) => [
      [['ada lovelace king'], ['a', 'l', 'k'].join(n % 2 === 0 ? '' : '.')],
      [['  '], ''],
    ],
  },
];

/** `shiftValue` → `shift-value`. */
function kebab(stem: string): string {
  return stem.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** Module `n` (from 1) of a scenario of `total`, in `folder`: one exported function with two or three cases. */
export function longScenarioModule(n: number, total: number, folder: string): SpecModule {
  const kind = KINDS[n % KINDS.length] ?? KINDS[0];
  if (kind === undefined) throw new Error('the long scenario has no kinds of module');
  const number = String(n).padStart(Math.max(4, String(total).length), '0');
  const body = kind.body(n);
  const fn = {
    name: `${kind.stem}${number}`,
    ...(kind.params === null ? {} : { params: [...kind.params] }),
    ...(body === null ? {} : { body }),
    cases: kind.cases(n).map(([args, returns]) => ({ args: [...args], returns })),
  };
  return { path: `${folder}${kebab(kind.stem)}-${number}.js`, exports: [fn] };
}

/** How many kinds of module there are: a scenario of at least this many has one of each. */
export const LONG_SCENARIO_KINDS = KINDS.length;
