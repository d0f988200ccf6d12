import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A store on a fresh SQLite file in a temporary folder, for a conformance suite: `reopen` opens
 * the same file again, and `cleanup` closes every store it opened and removes the folder.
 */
export function sqliteStoreUnderTest<Store extends { close(): void }>(
  prefix: string,
  open: (path: string) => Store,
): { store: Store; reopen: () => Store; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const path = join(dir, 'colony.db');
  const opened: Store[] = [];
  const openOne = (): Store => {
    const store = open(path);
    opened.push(store);
    return store;
  };
  return {
    store: openOne(),
    reopen: openOne,
    cleanup: () => {
      for (const store of opened) store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
