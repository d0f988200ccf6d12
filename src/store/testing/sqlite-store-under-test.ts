import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A store on a fresh SQLite file in a temporary folder, for a conformance suite: `reopen` opens
 * the same file again, and `cleanup` closes every store it opened and removes the folder.
 */
export async function sqliteStoreUnderTest<Store extends { close(): Promise<void> }>(
  prefix: string,
  open: (path: string) => Store,
): Promise<{ store: Store; reopen: () => Promise<Store>; cleanup: () => Promise<void> }> {
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
    reopen: async () => openOne(),
    cleanup: async () => {
      try {
        for (const store of opened) await store.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
