import { z } from 'zod';

/**
 * The scenario format: what a goal or a task asks the sim to build. It travels inside the
 * task text as a fenced code block tagged `colony-spec` holding JSON, so a real model could
 * read the same task.
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

const moduleSchema = z.object({
  path: z
    .string()
    .regex(MODULE_PATH, 'must be a relative path ending in .js, like src/text/pad.js')
    .refine((path) => !path.endsWith('.test.js'), 'must name the module, not its test file'),
  exports: z.array(functionSchema).min(1, 'needs at least one function'),
});

const scenarioSchema = z
  .object({
    project: z.object({
      test: z.string().min(1, 'must be the command that runs the tests, like "node --test"'),
      index: z.string().regex(MODULE_PATH, 'must be a relative path ending in .js, like src/index.js'),
    }),
    modules: z.array(moduleSchema).min(1, 'needs at least one module'),
  })
  .superRefine((scenario, context) => {
    const seenPaths = new Set<string>();
    scenario.modules.forEach((module, moduleIndex) => {
      if (seenPaths.has(module.path)) {
        context.addIssue({ code: 'custom', path: ['modules', moduleIndex, 'path'], message: `${module.path} is listed twice` });
      }
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
  });

/** A function answered only by its cases must not give two answers for the same arguments. */
function checkCasesAgree(cases: readonly ScenarioCase[], path: (string | number)[], context: z.RefinementCtx): void {
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

export type Scenario = z.infer<typeof scenarioSchema>;
export type ScenarioModule = Scenario['modules'][number];
export type ScenarioFunction = ScenarioModule['exports'][number];
export type ScenarioCase = ScenarioFunction['cases'][number];

export type ScenarioResult = { readonly ok: true; readonly scenario: Scenario } | { readonly ok: false; readonly error: string };

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

/** The expected shape, shown in every error so the writer of the task can fix it. */
export const SCENARIO_EXAMPLE = [
  'Expected a fenced code block tagged colony-spec holding JSON like this',
  '(params and body are optional; without a body the function answers its cases):',
  '```colony-spec',
  JSON.stringify(EXAMPLE, null, 2),
  '```',
].join('\n');

const BLOCK_PATTERN = /(^|\n)[ \t]*(`{3,})colony-spec[^\n]*\n([\s\S]*?)\n[ \t]*\2/;

/** Finds the first colony-spec block in `text` and validates it. */
export function parseScenario(text: string): ScenarioResult {
  const match = BLOCK_PATTERN.exec(text);
  const source = match?.[3];
  if (source === undefined) {
    return { ok: false, error: `The task has no colony-spec block, so it does not say what to build.\n${SCENARIO_EXAMPLE}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(source);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, error: `The colony-spec block is not valid JSON: ${reason}.\n${SCENARIO_EXAMPLE}` };
  }
  const parsed = scenarioSchema.safeParse(json);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `- ${describePath(issue.path)}: ${issue.message}`);
    return {
      ok: false,
      error: ['The colony-spec block does not have the expected shape:', ...problems, SCENARIO_EXAMPLE].join('\n'),
    };
  }
  return { ok: true, scenario: parsed.data };
}

function describePath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'the spec';
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : `${index === 0 ? '' : '.'}${String(part)}`))
    .join('');
}

export { indexLineFor, renderModuleSource, renderModuleTest, testPathFor } from './module-render.js';
