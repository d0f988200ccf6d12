import { z } from 'zod';
import { checkModules, parseSpecBlock, SPEC_EXAMPLE, SPEC_FIELDS, type SpecCase, type SpecFunction, type SpecModule } from '../../spec/colony-spec.js';

/**
 * A scenario: a colony-spec (see `spec/colony-spec.ts`) with everything the sim needs to build
 * it: the test command, the index file and at least one module. It travels inside the task
 * text, so a real model could read the same task.
 */

export type { JsonValue } from '../../spec/colony-spec.js';

const scenarioSchema = z
  .object({
    project: z.object({ test: SPEC_FIELDS.test, index: SPEC_FIELDS.index }),
    modules: SPEC_FIELDS.modules,
  })
  .superRefine((scenario, context) => checkModules(scenario.modules, context));

export type Scenario = z.infer<typeof scenarioSchema>;
export type ScenarioModule = SpecModule;
export type ScenarioFunction = SpecFunction;
export type ScenarioCase = SpecCase;

export type ScenarioResult = { readonly ok: true; readonly scenario: Scenario } | { readonly ok: false; readonly error: string };

/** The expected shape, shown in every error so the writer of the task can fix it. */
export const SCENARIO_EXAMPLE = SPEC_EXAMPLE;

/** Finds the first colony-spec block in `text` and checks it has all a scenario needs. */
export function parseScenario(text: string): ScenarioResult {
  const parsed = parseSpecBlock(text, scenarioSchema);
  return parsed.ok ? { ok: true, scenario: parsed.spec } : { ok: false, error: parsed.error };
}

/** The spec with one module per line: readable, and far shorter than fully indented JSON. */
export function specBlock(project: Scenario['project'], modules: readonly ScenarioModule[]): string {
  const moduleLines = modules.map((module, index) => `    ${JSON.stringify(module)}${index < modules.length - 1 ? ',' : ''}`);
  const json = ['{', `  "project": ${JSON.stringify(project)},`, '  "modules": [', ...moduleLines, '  ]', '}'];
  return ['```colony-spec', ...json, '```'].join('\n');
}
