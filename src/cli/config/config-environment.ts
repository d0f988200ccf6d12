import { closestName } from './closest-name.js';
import { isSecretKey, secretProblem } from './secret-checks.js';
import { SETTINGS, settingVariable } from './setting-table.js';
import type { GivenValue, GivenValues } from './types.js';

/**
 * `COLONY_*` variables colony reads for other purposes than settings (its own tests and
 * benchmarks): never taken for misspelt settings.
 */
const OTHER_VARIABLES: ReadonlySet<string> = new Set(['COLONY_REQUIRE_SANDBOX_TESTS', 'COLONY_BENCH_REPO', 'COLONY_BENCH_WORKSPACE_COUNTS']);

export type EnvironmentValues = GivenValues & { readonly warnings: readonly string[] };

/**
 * The settings the environment gives: each setting's variable (`COLONY_WORKERS=2`), its value
 * the text its flag would take, true or false for a switch. An empty variable counts as unset.
 * Any other `COLONY_*` variable is left alone, as colony and the tools around it have their
 * own; one a letter or two away from a setting's variable earns a warning naming it, since it
 * is most likely that setting misspelt and silently ignoring it would run with the default.
 */
export function readConfigEnvironment(env: Readonly<Record<string, string | undefined>>): EnvironmentValues {
  const values: GivenValue[] = [];
  for (const setting of SETTINGS) {
    const variable = settingVariable(setting);
    const text = env[variable];
    if (text === undefined || text === '') continue;
    const secret = secretProblem(variable, setting, text);
    if (secret !== null) return { ok: false, error: secret, warnings: [] };
    values.push({ setting, value: text, source: { kind: 'environment', variable } });
  }
  return { ok: true, values, warnings: misspeltVariables(env) };
}

function misspeltVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  const variables = SETTINGS.map(settingVariable);
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('COLONY_') || variables.includes(name) || OTHER_VARIABLES.has(name) || isSecretKey(name)) continue;
    const closest = closestName(name.slice('COLONY_'.length), variables.map((variable) => variable.slice('COLONY_'.length)));
    if (closest !== null) warnings.push(`colony: WARNING: ${name} is not a setting and is ignored; did you mean COLONY_${closest}? (colony config lists every setting's variable)`);
  }
  return warnings;
}
