import type { ModelFactory } from '../model/registry.js';
import { SIM_MODEL_FACTORY } from '../sim/sim-model-factory.js';

/** The providers the CLI adds to the model layer's built-in ones: the simulated model, `sim`. */
export const CLI_MODEL_FACTORIES: Readonly<Record<string, ModelFactory>> = { sim: SIM_MODEL_FACTORY };
