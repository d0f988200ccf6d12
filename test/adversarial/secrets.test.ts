import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { startModelServer, type Fault, type ModelServer } from '../../src/model/server/model-server.js';
import { createSimLanguageModel } from '../../src/sim/sim-language-model.js';
import { parseSimSpec } from '../../src/sim/sim-options.js';
import { runCli, type CliRun } from '../testing/example-repository.js';
import { describeRuns } from '../testing/runs-need-sandbox.js';
import { defaultStateDir } from '../../src/orchestrator/setup/state-directory.js';

/**
 * Keys planted in the environment of a real `colony run` (the default variable and the one
 * named by --api-key-env), a project whose test command prints its environment, and a model
 * server whose errors echo the keys back as a careless provider might. Afterwards every byte
 * colony wrote (the state directory whole, the SQLite files included) and printed is searched
 * for the keys: they must be nowhere.
 */
const OPENAI_KEY = `sk-colony-planted-openai-${randomBytes(12).toString('hex')}`;
const CUSTOM_KEY = `sk-colony-planted-custom-${randomBytes(12).toString('hex')}`;
const KEY_VARIABLE = 'COLONY_PLANTED_TOKEN';

const GOAL = `# clampkit

Build clampkit: \`src/clamp.js\` exports \`clamp\`, re-exported from \`src/index.js\`, with a node:test file next to it.

\`\`\`colony-spec
{
  "project": { "test": "env && node --test", "index": "src/index.js" },
  "modules": [
    {
      "path": "src/clamp.js",
      "exports": [
        {
          "name": "clamp",
          "params": ["value", "min", "max"],
          "body": "return Math.min(Math.max(value, min), max);",
          "cases": [
            { "args": [5, 0, 3], "returns": 3 },
            { "args": [-1, 0, 3], "returns": 0 }
          ]
        }
      ]
    }
  ]
}
\`\`\`
`;

function createProject(): { dir: string; cleanup(): void } {
  const base = mkdtempSync(join(tmpdir(), 'colony-secrets-'));
  // Sandboxed commands run as other users: they must get through to the workspaces.
  chmodSync(base, 0o755);
  const dir = join(base, 'clampkit');
  mkdirSync(join(dir, 'src'), { recursive: true });
  writeFileSync(join(dir, 'GOAL.md'), GOAL);
  writeFileSync(join(dir, 'package.json'), '{ "name": "clampkit", "type": "module", "private": true, "scripts": { "test": "node --test" } }\n');
  writeFileSync(join(dir, 'src', 'index.js'), '// The public API: every module is re-exported here.\n');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@colony.invalid', '-c', 'commit.gpgsign=false', ...args], { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  return { dir, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

/** Every regular file under `dir`, recursively, links not followed. */
function filesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...filesUnder(path));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

/** The files under `dir` whose bytes hold `secret` (as UTF-8 or UTF-16), and the printed streams that do. */
function whereFound(secret: string, dir: string, run: CliRun): string[] {
  const needles = [Buffer.from(secret, 'utf8'), Buffer.from(secret, 'utf16le')];
  const found = filesUnder(dir).filter((file) => statSync(file).size > 0 && needles.some((needle) => readFileSync(file).includes(needle)));
  if (run.stdout.includes(secret)) found.push('<stdout>');
  if (run.stderr.includes(secret)) found.push('<stderr>');
  return found;
}

/** A provider error that repeats what it was sent, keys and all. */
function echoingFault(status: number): Fault {
  const message = `upstream rejected the request (Authorization: Bearer ${CUSTOM_KEY}; OPENAI_API_KEY=${OPENAI_KEY}); see https://colony:${CUSTOM_KEY}@provider.invalid/status`;
  return { status, retryAfterSeconds: 0, body: JSON.stringify({ error: { message, type: 'server_error', code: null } }) };
}

describeRuns('secrets in a real colony run over the OpenAI-compatible protocol', () => {
  let server: ModelServer;
  let project: { dir: string; cleanup(): void };
  const saved: Record<string, string | undefined> = {};

  beforeAll(async () => {
    const sim = parseSimSpec('sim?seed=4&bug=0');
    if (!sim.ok) throw new Error(sim.error);
    server = await startModelServer({ model: createSimLanguageModel(sim.options) });
    // The keys are in the process's own environment too, where commands would inherit them from.
    for (const [name, value] of [['OPENAI_API_KEY', OPENAI_KEY], [KEY_VARIABLE, CUSTOM_KEY]] as const) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterAll(async () => {
    await server.close();
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  beforeEach(() => {
    project = createProject();
  });
  afterEach(() => {
    project.cleanup();
  });

  const environment = () => ({ PATH: process.env.PATH, HOME: process.env.HOME, OPENAI_API_KEY: OPENAI_KEY, [KEY_VARIABLE]: CUSTOM_KEY });

  it('keeps the keys out of commands, events, the state directory and what colony prints', async () => {
    server.faults.push(echoingFault(500), echoingFault(429));
    const run = await runCli(
      ['run', join(project.dir, 'GOAL.md'), '--repo', project.dir, '--model', 'openai-compatible:sim', '--base-url', `${server.url}/v1`, '--api-key-env', KEY_VARIABLE, '--workers', '1', '--verbose'],
      { env: environment() },
    );
    expect(run.code).toBe(0);
    // The key did its job: the server got it.
    expect(server.requests.some((request) => request.headers.authorization === `Bearer ${CUSTOM_KEY}`)).toBe(true);
    const events = await runCli(['events', '--repo', project.dir, '--json'], { env: environment() });
    // The probes ran: a command printed its environment, and the echoing errors were recorded.
    const commandOutputs = events.stdout
      .split('\n')
      .filter((line) => line.includes('"type":"tool.ended"') && line.includes('"name":"run_command"'))
      .join('\n');
    expect(commandOutputs).toMatch(/PATH=/);
    // Not merely redacted: the variables never reached the command at all.
    expect(commandOutputs).not.toMatch(/OPENAI_API_KEY|COLONY_PLANTED_TOKEN/);
    expect(events.stdout).toMatch(/upstream rejected the request \(Authorization: Bearer \[redacted\]; OPENAI_API_KEY=\[redacted\]\); see https:\/\/\[redacted\]@provider\.invalid/);
    for (const key of [CUSTOM_KEY, OPENAI_KEY]) {
      expect(whereFound(key, defaultStateDir(project.dir), run)).toEqual([]);
      expect(events.stdout).not.toContain(key);
    }
  }, 180_000);

  it('keeps a key given in --base-url as user:key@host out of everything it records and prints', async () => {
    const url = new URL(`${server.url}/v1`);
    const withCredentials = `${url.protocol}//colony:${CUSTOM_KEY}@${url.host}${url.pathname}`;
    const run = await runCli(
      ['run', join(project.dir, 'GOAL.md'), '--repo', project.dir, '--model', 'openai-compatible:sim', '--base-url', withCredentials, '--workers', '1', '--verbose'],
      { env: environment() },
    );
    const events = await runCli(['events', '--repo', project.dir, '--json'], { env: environment() });
    // fetch refuses such a URL, and says so with the URL in its message: the message is kept, the key is not.
    expect(run.stderr).toContain(`http://[redacted]@${url.host}/v1`);
    expect(events.stdout).toContain(`http://[redacted]@${url.host}/v1`);
    expect(whereFound(CUSTOM_KEY, defaultStateDir(project.dir), run)).toEqual([]);
    expect(events.stdout).not.toContain(CUSTOM_KEY);
  }, 180_000);
});
