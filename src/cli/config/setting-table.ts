import { DEFAULT_FRESHNESS, DEFAULT_GREEN_SETTINGS, DEFAULT_SANDBOX_SETTINGS } from '../../events/run-settings.js';
import { DEFAULT_COMMAND_LIMITS } from '../../sandbox/process/command-limits.js';
import { everyLiteral, sizeText, stepsLiteral } from './value-text.js';
import type { Setting, TableName } from './types.js';

const { reflectEvery, scratchpadEvery } = DEFAULT_FRESHNESS;
const green = DEFAULT_GREEN_SETTINGS;

/**
 * Every setting of `colony run` a configuration file or a `COLONY_*` variable can give, in the
 * order `colony init` writes them. A key is its flag's name (without the table's name where the
 * flag starts with it: `[budget] usd` is `--budget-usd`), and its variable is the flag's name in
 * capitals (`COLONY_BUDGET_USD`). Defaults are not written here but read from the flags and the
 * run settings (`events/run-settings.ts`), so `colony config` and `colony init` show the ones a
 * run goes by.
 */
export const SETTINGS: readonly Setting[] = [
  { key: 'model', flag: '--model', kind: 'text', meaning: "the workers' model: sim[?options], openai:<model>, anthropic:<model>, openai-compatible:<model>" },
  { key: 'planner-model', flag: '--planner-model', kind: 'text', meaning: "the planners' model", unset: { means: "the workers' model", example: '"anthropic:claude-opus-4-5"' } },
  { key: 'base-url', flag: '--base-url', kind: 'text', meaning: 'the API base URL (required for openai-compatible)', unset: { means: "the provider's own", example: '"http://localhost:8000/v1"' } },
  {
    key: 'api-key-env',
    flag: '--api-key-env',
    kind: 'text',
    meaning: 'the environment variable holding the API key (never the key itself)',
    unset: { means: "the provider's usual one, such as OPENAI_API_KEY", example: '"OPENAI_API_KEY"' },
  },
  { key: 'prices', flag: '--prices', kind: 'path', meaning: 'a JSON file of model prices that adds to or overrides the known ones', unset: { means: 'the prices colony knows', example: '"prices.json"' } },
  { key: 'trunk', flag: '--trunk', kind: 'text', meaning: 'the branch the work lands on', unset: { means: 'a branch of the run\'s own, colony/<short goal name>, made from the commit checked out', example: '"main"' } },
  {
    key: 'store',
    flag: '--store',
    kind: 'text',
    meaning: "where the run's log and tasks are kept: a PostgreSQL database that colony workers on other machines share (its password in PGPASSWORD or ~/.pgpass, never here)",
    unset: { means: 'a SQLite file in the state directory', example: '"postgres://colony@db.internal:5432/colony"' },
  },
  {
    key: 'origin',
    flag: '--origin',
    kind: 'text',
    meaning: 'with store: the git repository every host lands on (its password in ~/.netrc or on the command line, never here)',
    unset: { means: 'this repository, for colony workers on this machine', example: '"https://git.internal/project.git"' },
  },
  { key: 'workers', flag: '--workers', kind: 'whole', meaning: 'the most workers running at once (planners do not count)' },
  { key: 'max-steps', flag: '--max-steps', kind: 'whole', meaning: 'the most model calls one worker may make' },
  { key: 'planner-max-steps', flag: '--planner-max-steps', kind: 'whole', meaning: 'the most model calls one planner may make' },
  { key: 'merge-check', flag: '--merge-check', kind: 'text', meaning: "a command each worker's merge must pass, run on its work replayed onto main", unset: { means: 'off', example: '"npm test"' } },
  { key: 'shared-deps', flag: '--no-shared-deps', kind: 'switch', meaning: "install the repository's dependencies once for all workers" },
  {
    key: 'setup',
    flag: '--setup',
    kind: 'text',
    meaning: "prepare the project's environment with this command, once per hash of setup-inputs, shared by every workspace",
    unset: { means: "npm's install, for a project with package.json", example: '"uv sync"' },
  },
  { key: 'setup-inputs', flag: '--setup-inputs', kind: 'files', meaning: 'the files of the repository the setup reads: it runs again when one changes', unset: { means: 'none', example: '["uv.lock", "pyproject.toml"]' } },
  { key: 'prompt-cache', flag: '--no-prompt-cache', kind: 'switch', meaning: "ask the model's provider to cache each agent's prompt, so repeated input is billed at the cached price" },
  { key: 'workspaces', flag: '--workspaces', kind: 'text', meaning: 'how workspaces are made: auto, overlay or worktree' },
  { key: 'workspace-disk-cap', flag: '--workspace-disk-cap', kind: 'size', meaning: 'the most disk all workspaces may take together', unset: { means: 'a fifth of the free space', example: '"20G"' } },
  { key: 'max-goal-size', flag: '--max-goal-size', kind: 'size', meaning: 'the largest goal colony reads', defaultLiteral: '"16M"' },
  { key: 'hang-after', flag: '--hang-after', kind: 'number', meaning: 'minutes a worker may record nothing before it is stopped (at least 1)' },
  { key: 'tui', flag: '--no-tui', kind: 'switch', meaning: 'show the terminal UI when colony runs in a terminal (run and resume)' },

  { key: 'tokens', table: 'budget', flag: '--budget-tokens', kind: 'whole', meaning: 'wind the run down after this many tokens, input plus output', unset: { means: 'no limit', example: '2_000_000' } },
  { key: 'usd', table: 'budget', flag: '--budget-usd', kind: 'number', meaning: 'wind the run down after it cost this many US dollars', unset: { means: 'no limit', example: '5' } },
  { key: 'max-hours', table: 'budget', flag: '--max-hours', kind: 'number', meaning: 'wind the run down after this many hours of wall time', unset: { means: 'no limit', example: '8' } },

  { key: 'method', table: 'sandbox', flag: '--sandbox', kind: 'text', meaning: "how agents' commands are confined: bubblewrap, unshare or none" },
  { key: 'network', table: 'sandbox', flag: '--network', kind: 'text', meaning: "network for agents' commands: none, registries (the package registries the project names), or allow (every host)", defaultLiteral: `"${DEFAULT_SANDBOX_SETTINGS.network.kind}"` },
  {
    key: 'network-allow',
    table: 'sandbox',
    flag: '--network-allow',
    kind: 'hosts',
    meaning: "let agents' commands reach only these hosts (*.domain for its subdomains), through a proxy",
    unset: { means: 'none', example: '["registry.npmjs.org", "*.github.com"]' },
  },
  { key: 'command-memory', table: 'sandbox', flag: '--command-memory', kind: 'size', meaning: 'the most memory one command may use', defaultLiteral: `"${sizeText(DEFAULT_COMMAND_LIMITS.memoryBytes)}"` },
  { key: 'command-processes', table: 'sandbox', flag: '--command-processes', kind: 'whole', meaning: 'the most processes one command may run at once', defaultLiteral: String(DEFAULT_COMMAND_LIMITS.maxProcesses) },
  { key: 'command-cpu', table: 'sandbox', flag: '--command-cpu', kind: 'whole', meaning: 'the most CPU seconds one command may use', defaultLiteral: String(DEFAULT_COMMAND_LIMITS.cpuSeconds) },

  {
    key: 'context-window',
    table: 'freshness',
    flag: '--context-window',
    kind: 'tokens',
    meaning: "the models' context windows in tokens: one for every model, or a table by model",
    unset: { means: "each model's own", example: '{ "openai:gpt-5" = 400000, sim = 32000 }' },
  },
  {
    key: 'max-output-tokens',
    table: 'freshness',
    flag: '--max-output-tokens',
    kind: 'tokens',
    meaning: "the models' output limits, the most tokens one answer may have: one for every model, or a table by model",
    unset: { means: "each model's own", example: '{ "openai-compatible:qwen3-coder" = 32000, sim = 4000 }' },
  },
  { key: 'compact-at', table: 'freshness', flag: '--compact-at', kind: 'whole', meaning: 'summarise a conversation when it reaches this percentage of its context window' },
  { key: 'compaction', table: 'freshness', flag: '--no-compaction', kind: 'switch', meaning: 'summarise conversations near their context window (off: they may outgrow it)' },
  { key: 'reflect-every', table: 'freshness', flag: '--reflect-every', kind: 'steps', meaning: 'remind agents to check their work against their goal every N steps', defaultLiteral: stepsLiteral(reflectEvery) },
  {
    key: 'scratchpad-every',
    table: 'freshness',
    flag: '--scratchpad-every',
    kind: 'steps',
    meaning: 'remind an agent that has not rewritten its scratchpad for N steps',
    defaultLiteral: stepsLiteral(scratchpadEvery),
  },

  {
    key: 'check',
    table: 'green',
    flag: '--check',
    kind: 'text',
    meaning: "the project's check, run on snapshots of main",
    unset: { means: "the goal's colony-spec test command, else npm test, make test, ... as the project has", example: '"npm test"' },
  },
  {
    key: 'every',
    table: 'green',
    flag: '--green-every',
    kind: 'every',
    meaning: 'snapshot main after N landed commits, after M minutes (Mm), both (N,Mm), or off',
    defaultLiteral: everyLiteral(green),
  },
  { key: 'branch', table: 'green', flag: '--green-branch', kind: 'text', meaning: 'the branch a passing snapshot moves forward (not the trunk)', unset: { means: '"green" beside the branch checked out, "<trunk>-green" beside any other trunk', example: '"green"' } },
  { key: 'tag', table: 'green', flag: '--green-tag', kind: 'switch', meaning: 'tag every commit the green branch moves to', defaultLiteral: String(green.tag) },
  { key: 'check-timeout', table: 'green', flag: '--check-timeout', kind: 'number', meaning: 'minutes a check may run before it counts as failing', defaultLiteral: String(green.checkTimeoutMs / 60_000) },
];

/** The tables in the order files are written, each with what it holds. */
export const TABLES: readonly { readonly name: TableName; readonly meaning: string }[] = [
  { name: 'budget', meaning: "the run's spending and time limits" },
  { name: 'sandbox', meaning: "how agents' commands are confined" },
  { name: 'freshness', meaning: 'what keeps agents fresh over a long run' },
  { name: 'green', meaning: 'the green branch loop' },
];

/**
 * Flags of `colony run` that no file gives: they say how one invocation behaves (`--new`,
 * `--json`, `--quiet`, `--verbose`), what it builds (`--goal`, as the goal file is), or where it
 * works (`--repo` finds the project file, and `--state` is named on each command that reads the run).
 */
export const INVOCATION_FLAGS: readonly string[] = ['--repo', '--state', '--new', '--goal', '--json', '--quiet', '--verbose', '--help'];

/** How a setting is named in messages and in `colony config`: `workers`, `budget.usd` (TOML's own dotted form). */
export function settingName(setting: Setting): string {
  return setting.table === undefined ? setting.key : `${setting.table}.${setting.key}`;
}

/** The environment variable of a setting: its flag in capitals, `--no-` dropped (`COLONY_SHARED_DEPS=false`). */
export function settingVariable(setting: Setting): string {
  return `COLONY_${setting.flag.replace(/^--(no-)?/, '').toUpperCase().replace(/-/g, '_')}`;
}
