import { parseModelSpec } from '../../model/model-spec.js';
import { parseSimSpec } from '../../sim/sim-options.js';
import { fail, modelCheckName, pass, type DoctorCheck, type ModelCheckOptions, type ModelToCheck } from './types.js';

/**
 * One line per distinct model (the same spec at the same address with the same key is
 * checked once, for every role that uses it). The sim passes without a request. Any other
 * model needs its key's variable set and one cheap request answered (`reachModel`): the
 * providers' code, the AI SDK with it, is loaded only then.
 */
export async function checkModels(models: readonly ModelToCheck[], options: ModelCheckOptions): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  for (const model of distinctModels(models)) {
    const parsed = parseModelSpec(model.spec);
    if (parsed?.provider === 'sim') {
      checks.push(checkSim(model));
      continue;
    }
    const { reachModel } = await import('./model-reach.js');
    checks.push(await reachModel(model, options));
  }
  return checks;
}

function checkSim(model: ModelToCheck): DoctorCheck {
  const sim = parseSimSpec(model.spec);
  if (!sim.ok) return fail(modelCheckName(model), sim.error, 'write the spec as sim or sim?key=value&…, with the keys the message names');
  return pass(modelCheckName(model), 'the simulated model runs inside colony: no provider, no key, no request', { input: 0, output: 0 });
}

function distinctModels(models: readonly ModelToCheck[]): ModelToCheck[] {
  const byKey = new Map<string, ModelToCheck>();
  for (const model of models) {
    const key = JSON.stringify([model.spec.trim(), model.baseUrl ?? null, model.apiKeyEnv ?? null]);
    const seen = byKey.get(key);
    byKey.set(key, seen === undefined ? { ...model, spec: model.spec.trim() } : { ...seen, roles: [...new Set([...seen.roles, ...model.roles])] });
  }
  return [...byKey.values()];
}
