import { chatModelFor, type ModelFactory } from '../model/registry.js';
import { createSimLanguageModel } from './sim-language-model.js';
import { parseSimSpec } from './sim-options.js';

/**
 * The `sim` provider for `resolveModel`: the deterministic simulated model, in this process.
 * The CLI registers it beside the built-in providers; the model layer knows nothing of it.
 */
export const SIM_MODEL_FACTORY: ModelFactory = {
  form: 'sim[?seed=7&latency=50..400&bug=0.2&malformed=0.05&crash=0.02&context=32000]',
  create: (parsed, options) => {
    const sim = parseSimSpec(parsed.spec);
    if (!sim.ok) return sim;
    // The simulated model needs no gate: it runs in this process, with no provider to overload.
    // Its price comes from the table (free, unless --prices says otherwise).
    return { ok: true, model: chatModelFor(createSimLanguageModel(sim.options), parsed, options, {}) };
  },
};
