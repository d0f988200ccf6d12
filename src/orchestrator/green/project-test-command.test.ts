import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectProjectTestCommand, testCommandSentence } from './project-test-command.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'colony-test-command-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function files(contents: Record<string, string>): string {
  for (const [name, text] of Object.entries(contents)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('the project’s test command', () => {
  it('is npm test for a package.json with a test script', () => {
    expect(detectProjectTestCommand(files({ 'package.json': JSON.stringify({ scripts: { test: 'node --test' } }) }))).toEqual({
      command: 'npm test',
      source: 'the test script in package.json',
    });
  });

  it('is make test for a Makefile with a test target, not for a variable named test', () => {
    expect(detectProjectTestCommand(files({ Makefile: 'TEST := unit\nbuild:\n\tcc main.c\n\ncheck test: build\n\t./run-tests\n' }))?.command).toBe('make test');
    rmSync(join(dir, 'Makefile'));
    expect(detectProjectTestCommand(files({ Makefile: 'test := unit\nbuild:\n\tcc main.c\n\t$(MAKE) test\n' }))).toBeNull();
  });

  it('is pytest for pyproject.toml or pytest.ini', () => {
    expect(detectProjectTestCommand(files({ 'pytest.ini': '[pytest]\n' }))).toEqual({ command: 'pytest', source: 'pytest.ini' });
    expect(detectProjectTestCommand(files({ 'pyproject.toml': '[project]\nname = "x"\n' }))).toEqual({ command: 'pytest', source: 'pyproject.toml' });
  });

  it('is cargo test for Cargo.toml and go test ./... for go.mod', () => {
    expect(detectProjectTestCommand(files({ 'Cargo.toml': '[package]\nname = "x"\n' }))?.command).toBe('cargo test');
    rmSync(join(dir, 'Cargo.toml'));
    expect(detectProjectTestCommand(files({ 'go.mod': 'module example.com/x\n' }))?.command).toBe('go test ./...');
  });

  it('passes over the test script npm init writes, and a package.json that does not parse, to the next kind', () => {
    files({ 'package.json': JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } }), 'go.mod': 'module x\n' });
    expect(detectProjectTestCommand(dir)?.command).toBe('go test ./...');
    files({ 'package.json': '{ not json' });
    expect(detectProjectTestCommand(dir)?.command).toBe('go test ./...');
  });

  it('takes package.json first when a project has several', () => {
    files({ 'package.json': JSON.stringify({ scripts: { test: 'vitest run' } }), Makefile: 'test:\n\tnpm test\n', 'go.mod': 'module x\n' });
    expect(detectProjectTestCommand(dir)?.command).toBe('npm test');
  });

  it('is none in an empty repository, and then the sentence sends the agent to the README', () => {
    expect(detectProjectTestCommand(dir)).toBeNull();
    expect(testCommandSentence(null)).toMatch(/colony found no test command in this repository .*: read its README to find how its tests are run\.$/);
    expect(testCommandSentence({ command: 'cargo test', source: 'Cargo.toml' })).toBe("Run this project's tests with `cargo test` (Cargo.toml).");
  });
});
