import type { RecordedRunSettings } from '../run-settings.js';

/** A run's settings as `colony run --model sim --workers 4` records them, for tests that fold a `run.configured`. */
export function runSettingsFixture(overrides: Partial<RecordedRunSettings> = {}): RecordedRunSettings {
  return {
    goalPath: '/srv/GOAL.md',
    goalSource: 'file',
    workerModel: 'sim',
    plannerModel: 'sim',
    baseUrl: null,
    apiKeyEnv: null,
    prices: {},
    trunk: 'colony/fixture',
    workers: 4,
    workerMaxSteps: 50,
    plannerMaxSteps: 50,
    mergeCheck: null,
    sharedDependencies: true,
    setup: null,
    promptCache: true,
    workspaces: 'auto',
    workspaceDiskCapBytes: null,
    limits: { tokens: null, usd: null, maxHours: null },
    sandbox: { method: 'none', network: { kind: 'none' }, setupNetwork: { kind: 'all' } },
    leaseMs: 30_000,
    hangAfterMs: 2_400_000,
    ...overrides,
  };
}
