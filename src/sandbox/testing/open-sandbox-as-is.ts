/**
 * Opens the bubblewrap and unshare sandboxes as whichever user runs this file, runs one
 * command through the first, and prints what happened as JSON. The tests run it as a user
 * that is not root, to exercise the sandbox of a harness that is not root for real.
 *
 *   node --import tsx open-sandbox-as-is.ts '{"runId":…,"workspace":…,"spillDir":…,"command":…}'
 */
import { openSandbox } from '../sandbox.js';

interface Input {
  readonly runId: string;
  readonly workspace: string;
  readonly spillDir: string;
  readonly command: string;
}

const input = JSON.parse(process.argv[2] ?? '{}') as Input;
const bubblewrap = await openSandbox({ method: 'bubblewrap', runId: input.runId });
const unshare = await openSandbox({ method: 'unshare', runId: `${input.runId}-unshare` });
let result: unknown = null;
if (bubblewrap.ok) {
  const run = bubblewrap.sandbox.runnerFor({ agentId: 'agent', workspace: input.workspace, hidden: [], spillDir: input.spillDir, shareNetwork: false });
  result = await run({ command: input.command, cwd: input.workspace, timeoutMs: 20_000 });
  await bubblewrap.sandbox.close();
}
if (unshare.ok) await unshare.sandbox.close();
const describeOpening = (opening: typeof bubblewrap) =>
  opening.ok ? { ok: true, summary: opening.sandbox.summary } : { ok: false, error: opening.error, fix: opening.fix };
process.stdout.write(JSON.stringify({ bubblewrap: describeOpening(bubblewrap), unshare: describeOpening(unshare), result }));
