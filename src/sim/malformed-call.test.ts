import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MALFORMED_KINDS, malformCall, malformedKindFor } from './malformed-call.js';
import { createToolExecutor, WORKER_TOOL_NAMES } from './testing/tool-executor.js';
import type { WorkerCall } from './worker/worker-tool-calls.js';

const dir = mkdtempSync(join(tmpdir(), 'colony-sim-malformed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const calls: WorkerCall[] = [
  { name: 'list_dir', input: { path: '.' } },
  { name: 'write_file', input: { path: 'a.js', content: 'x' } },
  { name: 'edit_file', input: { path: 'a.js', old_string: 'x', new_string: 'y' } },
  { name: 'run_command', input: { command: 'node --test' } },
  { name: 'merge_to_main', input: { message: 'Add a.js' } },
  { name: 'submit_handoff', input: { status: 'done', summary: 'Built a.js.' } },
];

const expectedRejection = {
  'truncated-json': 'invalid-json',
  'missing-field': 'missing-field',
  'wrong-type': 'wrong-type',
  'unknown-tool': 'unknown-tool',
} as const;

describe('malformCall', () => {
  it('spreads its rolls over every kind', () => {
    expect(MALFORMED_KINDS.map((_kind, index) => malformedKindFor((index + 0.5) / MALFORMED_KINDS.length))).toEqual([...MALFORMED_KINDS]);
  });

  it.each(MALFORMED_KINDS)('makes a %s call that a strict executor rejects as such, without running it', (kind) => {
    const execute = createToolExecutor(dir);
    for (const [position, call] of calls.entries()) {
      const spoiled = malformCall(call, kind, WORKER_TOOL_NAMES);
      const result = execute({ id: `call_0_${position}`, ...spoiled });
      expect(result.isError).toBe(true);
      expect(result.rejected).toBe(expectedRejection[kind]);
    }
    expect(readdirSync(dir)).toEqual([]);
  });
});
