import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { countCommitsAhead } from './commits-ahead.js';
import { createTemporaryRepository } from '../testing/temporary-repository.js';
import type { TemporaryRepository } from '../testing/temporary-repository.js';

describe('countCommitsAhead', () => {
  let temporary: TemporaryRepository;
  beforeEach(async () => {
    temporary = await createTemporaryRepository();
    await temporary.git(['switch', '--quiet', '-c', 'feature']);
    await temporary.write('one.txt', '1\n');
    await temporary.commitAll('One');
    await temporary.git(['switch', '--quiet', '--detach']);
    await temporary.write('two.txt', '2\n');
    await temporary.commitAll('Two');
  });
  afterEach(async () => {
    await temporary.remove();
  });

  it('counts the commits of every tip that the trunk lacks, each once', async () => {
    expect(await countCommitsAhead(temporary.root, 'main', ['refs/heads/feature'])).toEqual({ ok: true, count: 1 });
    expect(await countCommitsAhead(temporary.root, 'main', ['HEAD'])).toEqual({ ok: true, count: 2 });
    expect(await countCommitsAhead(temporary.root, 'main', ['HEAD', 'refs/heads/feature'])).toEqual({ ok: true, count: 2 });
    expect(await countCommitsAhead(temporary.root, 'feature', ['refs/heads/main'])).toEqual({ ok: true, count: 0 });
  });

  it('reads HEAD as a revision even when a file is named HEAD', async () => {
    await temporary.write('HEAD', 'a file\n');
    expect(await countCommitsAhead(temporary.root, 'main', ['HEAD'])).toEqual({ ok: true, count: 2 });
  });

  it('reports a tip or trunk that does not resolve as an error, not as zero', async () => {
    expect(await countCommitsAhead(temporary.root, 'main', ['refs/heads/missing'])).toMatchObject({ ok: false, error: expect.stringMatching(/refs\/heads\/missing/) });
    expect(await countCommitsAhead(temporary.root, 'missing', ['HEAD'])).toMatchObject({ ok: false, error: expect.stringMatching(/bad revision/) });
  });
});
