import { chmod, chown, lstat, mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Group read, write and search, plus set-group-ID so what is made inside takes the same group. */
const SHARED_DIRECTORY_BITS = 0o2070;

/**
 * Makes `dir` (created when missing) and every directory already below it belong to group
 * `gid`, group-writable and set-group-ID. Everything made inside afterwards (git checkouts,
 * overlay layers, files the harness writes) then belongs to that group as well, and is
 * group-writable as long as the process's umask leaves the group write bit alone (002). That is
 * how commands running under another uid in that group can write a workspace the harness made,
 * without a walk over every file of every checkout.
 *
 * Files already present keep their group and mode, and symbolic links are not followed: the
 * walk only ever changes directories it finds under `dir` itself.
 */
export async function shareDirectoryWithGroup(dir: string, gid: number): Promise<void> {
  await mkdir(dir, { recursive: true });
  await shareOne(dir, gid);
}

async function shareOne(dir: string, gid: number): Promise<void> {
  const info = await lstat(dir);
  if (!info.isDirectory()) return;
  if (info.gid !== gid) await chown(dir, -1, gid);
  if ((info.mode & SHARED_DIRECTORY_BITS) !== SHARED_DIRECTORY_BITS) await chmod(dir, (info.mode & 0o7777) | SHARED_DIRECTORY_BITS);
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    if (entry.isDirectory()) await shareOne(join(dir, entry.name), gid);
  }
}

/**
 * Takes the group's and others' write permission off every regular file below `dir`
 * (directories and links are left as they are). For a tree many workspaces share by hard link
 * or as an overlay's lower layer: no agent may change a file every other agent reads.
 */
export async function withdrawSharedWrite(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await withdrawSharedWrite(path);
    else if (entry.isFile()) {
      const info = await lstat(path);
      if ((info.mode & 0o022) !== 0) await chmod(path, info.mode & 0o7755);
    }
  }
}
