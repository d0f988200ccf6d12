import { posix } from 'node:path';
import type { Repository } from '../git/repository.js';
import { layerKey, listFiles, repositoryPathProblem, type DependencyInputs, type InstallInputFile } from './input-files.js';

/**
 * A project's own setup (`setup` and `setup-inputs` in colony.toml): a shell command that
 * prepares what every workspace needs (`uv sync`, `cargo fetch`, `go mod download`), and the
 * files of the repository its result depends on (`uv.lock`, `Cargo.lock`, `go.sum`).
 */
export interface SetupCommand {
  readonly command: string;
  /** Paths from the repository's root: files, or folders standing for every file in them. */
  readonly inputs: readonly string[];
}

/**
 * The inputs of a project's own setup at `commit`: every file `setup.inputs` names (a folder
 * names each file under it), read from git, and the key over the command and those files'
 * contents. An input the commit does not hold is the user's mistake and stops the run, saying
 * which; it is never taken as an empty file.
 */
export async function readSetupCommandInputs(repo: Repository, commit: string, setup: SetupCommand): Promise<DependencyInputs> {
  const files = new Map<string, InstallInputFile>();
  for (const given of setup.inputs) {
    const path = posix.normalize(given).replace(/\/+$/, '');
    if (path === '' || path === '.' || repositoryPathProblem(path) !== null) {
      return { ok: false, stopsRun: true, error: `setup-inputs names ${given}, which is not a path inside the repository: name files from the repository's root, such as uv.lock` };
    }
    const listed = await listFiles(repo, commit, [path]);
    if (!listed.ok) return { ok: false, stopsRun: true, error: listed.error };
    for (const file of listed.files) files.set(file.path, file);
    if (listed.files.length === 0) {
      return {
        ok: false,
        stopsRun: true,
        error: `setup-inputs names ${given}, which is not in commit ${commit.slice(0, 12)} of the trunk: commit it, or name the files the setup command reads as the trunk holds them`,
      };
    }
  }
  const sorted = [...files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const key = layerKey([['setup', setup.command], ...sorted.map((file): [string, string] => [`file:${file.path}`, `${file.mode} ${file.oid}`])]);
  return { ok: true, key, files: sorted, plan: { command: setup.command, label: setup.command, keeps: 'made', manager: null, registry: null, packages: null } };
}
