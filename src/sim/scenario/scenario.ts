import { z } from 'zod';
import { checkModules, parseSpecBlock, SPEC_FIELDS, type SpecModule } from '../../spec/colony-spec.js';

/**
 * A scenario: a colony-spec (see `spec/colony-spec.ts`) with everything the sim needs to build
 * it: the test command, the index file and at least one module. It travels inside the task
 * text, so a real model could read the same task.
 */

const scenarioSchema = z
  .object({
    project: z.object({ test: SPEC_FIELDS.test, index: SPEC_FIELDS.index }),
    modules: SPEC_FIELDS.modules,
  })
  .superRefine((scenario, context) => checkModules(scenario.modules, context));

export type Scenario = z.infer<typeof scenarioSchema>;

export type ScenarioResult = { readonly ok: true; readonly scenario: Scenario } | { readonly ok: false; readonly error: string };

/** Finds the first colony-spec block in `text` and checks it has all a scenario needs. */
export function parseScenario(text: string): ScenarioResult {
  const parsed = parseSpecBlock(text, scenarioSchema);
  return parsed.ok ? { ok: true, scenario: parsed.spec } : { ok: false, error: parsed.error };
}

/** The spec with one module per line: readable, and far shorter than fully indented JSON. */
export function specBlock(project: Scenario['project'], modules: readonly SpecModule[]): string {
  const moduleLines = modules.map((module, index) => `    ${JSON.stringify(module)}${index < modules.length - 1 ? ',' : ''}`);
  const json = ['{', `  "project": ${JSON.stringify(project)},`, '  "modules": [', ...moduleLines, '  ]', '}'];
  return ['```colony-spec', ...json, '```'].join('\n');
}
