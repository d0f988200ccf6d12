import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellWord } from './shell-word.js';

describe('shellWord', () => {
  it('leaves a plain path as it is and quotes one a shell would split or expand', () => {
    expect(shellWord('/tmp/colony-demo-x1/toolbox')).toBe('/tmp/colony-demo-x1/toolbox');
    expect(shellWord('/home/ann/My Projects/app')).toBe("'/home/ann/My Projects/app'");
    expect(shellWord('')).toBe("''");
  });

  it('gives bash back each text as the one argument it was', () => {
    const texts = ['/home/ann/My Projects/app', "it's $HOME", 'a;b|c&d', 'tab\there', '*', 'new\nline', '--state=x y'];
    const printed = execFileSync('bash', ['-c', `printf '%s\\0' ${texts.map(shellWord).join(' ')}`], { encoding: 'utf8' });
    expect(printed.split('\0').slice(0, -1)).toEqual(texts);
  });
});
