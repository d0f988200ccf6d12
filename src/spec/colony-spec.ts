import { z } from 'zod';
import { errorMessage } from '../errors/error-message.js';

/**
 * The goal format's one structured part: a fenced code block tagged `colony-spec` holding JSON,
 * inside a goal or a task written in Markdown. Everything in it is optional metadata a real
 * goal may carry: `project.test` (the command that checks the project) and `project.index`
 * (the file that re-exports its modules). `modules` lists what to build, function by function
 * with test cases; the simulated model needs it, a real model reads it as part of the text.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const MODULE_PATH = /^(?!\/)(?!.*(?:^|\/)\.\.?\/)[\w./-]+\.js$/;

const caseSchema = z.object({
  args: z.array(jsonValueSchema),
  returns: jsonValueSchema,
});

const functionSchema = z.object({
  name: z.string().regex(IDENTIFIER, 'must be a JavaScript identifier, like padLeft'),
  params: z.array(z.string().regex(IDENTIFIER, 'must be a JavaScript identifier, like text')).optional(),
  body: z.string().min(1, 'must not be empty when given').optional(),
  cases: z.array(caseSchema).min(1, 'needs at least one case, so the function can be tested'),
});

/** An npm package name, scoped or not: `is-odd`, `@scope/name`. */
const PACKAGE_NAME = /^(?:@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*$/;
/** An exact version, as a lockfile would pin it: `3.0.1`, `1.0.0-beta.2`. */
const EXACT_VERSION = /^\d+\.\d+\.\d+(?:-[\w.]+)?$/;

const moduleSchema = z.object({
  path: z
    .string()
    .regex(MODULE_PATH, 'must be a relative path ending in .js, like src/text/pad.js')
    .refine((path) => !path.endsWith('.test.js'), 'must name the module, not its test file'),
  exports: z.array(functionSchema).min(1, 'needs at least one function'),
  /**
   * Packages from the npm registry the module imports, by name with an exact version: whoever
   * builds the module adds them to the project (`npm install`) first.
   */
  packages: z
    .record(z.string(), z.string().regex(EXACT_VERSION, 'must be an exact version, like 3.0.1'))
    .superRefine((packages, context) => {
      for (const name of Object.keys(packages)) {
        if (!PACKAGE_NAME.test(name)) context.addIssue({ code: 'custom', path: [name], message: 'must be an npm package name, like is-odd' });
      }
    })
    .optional(),
  /**
   * Modules this one imports that other tasks build, by path: one in the same list must come
   * earlier in it; one not in it is built elsewhere. Whoever builds this module needs them on
   * main first; a planner publishes it once they landed.
   */
  uses: z.array(z.string().regex(MODULE_PATH, 'must be a relative path ending in .js, like src/text/pad.js')).optional(),
});

/** The fields of a spec, each checked the same way wherever it is required or optional. */
export const SPEC_FIELDS = {
  test: z.string().min(1, 'must be the command that runs the tests, like "node --test"'),
  index: z.string().regex(MODULE_PATH, 'must be a relative path ending in .js, like src/index.js'),
  modules: z.array(moduleSchema).min(1, 'needs at least one module'),
} as const;

export type SpecModule = z.infer<typeof moduleSchema>;
export type SpecFunction = SpecModule['exports'][number];
export type SpecCase = SpecFunction['cases'][number];

/**
 * A module list must not name a path twice, nor a function twice in one module, nor give one
 * function two answers; a module uses only modules listed before it (so no two use each other),
 * or ones the list does not hold (a task's brief carries its module alone; what it uses is
 * built by other tasks).
 */
export function checkModules(modules: readonly SpecModule[] | undefined, context: z.RefinementCtx): void {
  const seenPaths = new Set<string>();
  const listed = new Set((modules ?? []).map((module) => module.path));
  (modules ?? []).forEach((module, moduleIndex) => {
    if (seenPaths.has(module.path)) {
      context.addIssue({ code: 'custom', path: ['modules', moduleIndex, 'path'], message: `${module.path} is listed twice` });
    }
    (module.uses ?? []).forEach((used, useIndex) => {
      if (listed.has(used) && !seenPaths.has(used)) {
        const message = used === module.path ? 'a module cannot use itself' : `${used} must be listed before ${module.path}, which uses it`;
        context.addIssue({ code: 'custom', path: ['modules', moduleIndex, 'uses', useIndex], message });
      }
    });
    seenPaths.add(module.path);
    const seenNames = new Set<string>();
    module.exports.forEach((fn, fnIndex) => {
      if (seenNames.has(fn.name)) {
        context.addIssue({
          code: 'custom',
          path: ['modules', moduleIndex, 'exports', fnIndex, 'name'],
          message: `${fn.name} is exported twice from ${module.path}`,
        });
      }
      seenNames.add(fn.name);
      if (fn.body === undefined) checkCasesAgree(fn.cases, ['modules', moduleIndex, 'exports', fnIndex, 'cases'], context);
    });
  });
}

/** A function answered only by its cases must not give two answers for the same arguments. */
function checkCasesAgree(cases: readonly SpecCase[], path: (string | number)[], context: z.RefinementCtx): void {
  const answers = new Map<string, string>();
  for (const item of cases) {
    const key = JSON.stringify(item.args);
    const answer = JSON.stringify(item.returns);
    const earlier = answers.get(key);
    if (earlier !== undefined && earlier !== answer) {
      context.addIssue({ code: 'custom', path, message: `two cases give different answers for the arguments ${key}` });
    }
    answers.set(key, answer);
  }
}

const colonySpecSchema = z
  .object({
    project: z.object({ test: SPEC_FIELDS.test.optional(), index: SPEC_FIELDS.index.optional() }).optional(),
    modules: SPEC_FIELDS.modules.optional(),
  })
  .superRefine((spec, context) => checkModules(spec.modules, context));

export type ColonySpec = z.infer<typeof colonySpecSchema>;

const EXAMPLE = {
  project: { test: 'node --test', index: 'src/index.js' },
  modules: [
    {
      path: 'src/text/pad.js',
      exports: [
        {
          name: 'padLeft',
          params: ['text', 'width', 'fill'],
          body: 'return String(text).padStart(width, fill);',
          cases: [{ args: ['a', 3, '-'], returns: '--a' }],
        },
      ],
    },
  ],
};

/** The shape in full, shown in every error so the writer of the goal or task can fix it. */
export const SPEC_EXAMPLE = [
  'Expected a fenced code block tagged colony-spec holding JSON like this',
  '(params and body are optional; without a body the function answers its cases):',
  '```colony-spec',
  JSON.stringify(EXAMPLE, null, 2),
  '```',
].join('\n');

const BLOCK_PATTERN = /(^|\n)[ \t]*(`{3,})colony-spec[^\n]*\n([\s\S]*?)\n[ \t]*\2/;

/** Whether `text` has a colony-spec block at all, valid or not. */
export function hasSpecBlock(text: string): boolean {
  return text.includes('```colony-spec');
}

export type SpecBlockResult<T> =
  | { readonly ok: true; readonly spec: T }
  | { readonly ok: false; readonly error: string; readonly missing: boolean };

/**
 * Finds the first colony-spec block in `text` and checks it against `schema`. `missing` tells a
 * text with no block from one whose block is wrong; each error says what was wrong and shows the
 * expected shape.
 */
export function parseSpecBlock<T>(text: string, schema: z.ZodType<T>): SpecBlockResult<T> {
  const source = BLOCK_PATTERN.exec(text)?.[3];
  if (source === undefined) {
    return { ok: false, missing: true, error: `The task has no colony-spec block, so it does not say what to build.\n${SPEC_EXAMPLE}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (error) {
    const reason = errorMessage(error);
    return { ok: false, missing: false, error: `The colony-spec block is not valid JSON: ${reason}.\n${SPEC_EXAMPLE}` };
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `- ${describePath(issue.path)}: ${issue.message}`);
    return { ok: false, missing: false, error: ['The colony-spec block does not have the expected shape:', ...problems, SPEC_EXAMPLE].join('\n') };
  }
  return { ok: true, spec: parsed.data };
}

/** The colony-spec of a goal or task, every field optional; a text with no block has none (null). */
export function parseColonySpec(text: string): { readonly ok: true; readonly spec: ColonySpec | null } | { readonly ok: false; readonly error: string } {
  if (!hasSpecBlock(text)) return { ok: true, spec: null };
  const parsed = parseSpecBlock(text, colonySpecSchema);
  return parsed.ok ? parsed : { ok: false, error: parsed.error };
}

function describePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'the spec';
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`))
    .join('');
}
