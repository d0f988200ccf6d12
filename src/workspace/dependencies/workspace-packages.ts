import type { Repository } from '../git/repository.js';
import { blobEntry, listFiles, listTree, type InstallInputFile } from './input-files.js';

/*
 * The packages of a monorepo, whose package.json files an install of it reads: what the lockfile
 * lists (pnpm's importers, yarn 2+'s workspace resolutions), or, for a manager whose lockfile
 * does not (yarn 1, npm without a lockfile), the folders package.json's `workspaces` patterns
 * match in the commit.
 */

type Found<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** The folders of a pnpm lockfile's `importers:` section other than the root (`.`). */
export function pnpmImporters(lockfileText: string): string[] {
  const section = /^importers:\n((?:[ \t].*\n|\n)*)/m.exec(`${lockfileText}\n`)?.[1] ?? '';
  return section.split('\n').flatMap((line) => {
    // `  packages/a:` with its dependencies below, or `  packages/core: {}` for a package with none.
    const folder = /^ {2}(['"]?)([^'"\s][^'"]*?)\1:(?:\s.*)?$/.exec(line)?.[2];
    return folder === undefined || folder === '.' ? [] : [folder];
  });
}

/** The folders of a yarn 2+ lockfile's workspaces (`resolution: "@demo/util@workspace:packages/util"`) other than the root. */
export function berryWorkspaces(lockfileText: string): string[] {
  const folders = new Set<string>();
  for (const line of lockfileText.split('\n')) {
    const folder = /^\s+resolution:\s*"?.+?@workspace:([^"]+?)"?\s*$/.exec(line)?.[1];
    if (folder !== undefined && folder !== '.') folders.add(folder);
  }
  return [...folders].sort();
}

/**
 * The folders and tarballs of the repository a pnpm lockfile installs packages from (a `file:`
 * dependency on a folder, `resolution: {directory: test-dep/a, type: directory}`, or on a
 * tarball, `resolution: {tarball: file:vendor/a.tgz}`): pnpm copies their files in, so every
 * file in them is an input.
 */
export function pnpmLocalSources(lockfileText: string): string[] {
  const sources = new Set<string>();
  for (const match of lockfileText.matchAll(/resolution: \{(?:directory: ([^,}]+), type: directory|tarball: file:([^,}]+))\}/g)) {
    const path = (match[1] ?? match[2] ?? '').trim().replace(/^['"]|['"]$/g, '');
    if (path !== '') sources.add(path.replace(/^\.\//, ''));
  }
  return [...sources].sort();
}

/**
 * The folders package.json's `workspaces` (a list of patterns, or `{ packages: [...] }` as
 * yarn 1 also takes) match in `commit`: folders holding a package.json, where `*` stands for
 * one folder name, `**` for any depth, and a pattern starting with `!` leaves folders out.
 * Patterns with other glob syntax (`{a,b}`, `[ab]`) are refused.
 */
export async function manifestWorkspaces(repo: Repository, commit: string, workspaces: unknown): Promise<Found<string[]>> {
  const patterns = Array.isArray(workspaces) ? workspaces : typeof workspaces === 'object' && workspaces !== null ? (workspaces as Record<string, unknown>).packages : undefined;
  if (!Array.isArray(patterns) || !patterns.every((pattern): pattern is string => typeof pattern === 'string')) {
    return { ok: false, error: 'package.json\'s "workspaces" is neither a list of folder patterns nor { "packages": [...] }' };
  }
  const unsupported = patterns.find((pattern) => /[[\]{}]/.test(pattern));
  if (unsupported !== undefined) return { ok: false, error: `package.json's workspace pattern ${JSON.stringify(unsupported)} uses glob syntax colony does not read (only * and **)` };
  const including = patterns.filter((pattern) => !pattern.startsWith('!')).map(normalPattern);
  const excluding = patterns.filter((pattern) => pattern.startsWith('!')).map((pattern) => patternRegex(normalPattern(pattern.slice(1))));
  const roots = [...new Set(including.map(staticPrefix))];
  if (roots.length === 0) return { ok: true, value: [] };
  const listed = await listFiles(repo, commit, roots.includes('') ? ['.'] : roots);
  if (!listed.ok) return listed;
  const matching = including.map(patternRegex);
  const folders = listed.files.flatMap(({ path }) => {
    if (!path.endsWith('/package.json')) return [];
    const folder = path.slice(0, -'/package.json'.length);
    if (folder.split('/').includes('node_modules')) return [];
    return matching.some((regex) => regex.test(folder)) && !excluding.some((regex) => regex.test(folder)) ? [folder] : [];
  });
  return { ok: true, value: folders.sort() };
}

/**
 * The manifests of the packages package.json's `workspaces` patterns match in `commit` (see
 * `manifestWorkspaces`); none when it has no `workspaces`.
 */
export async function patternWorkspaceManifests(repo: Repository, commit: string, workspaces: unknown): Promise<Found<InstallInputFile[]>> {
  if (workspaces === undefined) return { ok: true, value: [] };
  const folders = await manifestWorkspaces(repo, commit, workspaces);
  return folders.ok ? workspaceManifests(repo, commit, folders.value, 'package.json') : folders;
}

/** The manifests of `folders` in `commit`; a folder without one is an error naming it. */
export function workspaceManifests(repo: Repository, commit: string, folders: readonly string[], source: string): Promise<Found<InstallInputFile[]>> {
  const missing = (path: string) => `${source} names the workspace package ${path.slice(0, -'/package.json'.length)}, which has no package.json in commit ${commit.slice(0, 12)}`;
  return namedFiles(repo, commit, folders.map((folder) => `${folder}/package.json`), missing);
}

/** The files at `paths` in `commit`, as inputs of the install; a path that is not a file there is an error, `missing` saying it. */
export async function namedFiles(repo: Repository, commit: string, paths: readonly string[], missing: (path: string) => string): Promise<Found<InstallInputFile[]>> {
  const listed = await listTree(repo, commit, paths);
  if (!listed.ok) return listed;
  const files: InstallInputFile[] = [];
  for (const path of paths) {
    const entry = blobEntry(listed.entries, path);
    if (entry === null) return { ok: false, error: missing(path) };
    files.push({ path, mode: entry.mode, oid: entry.oid });
  }
  return { ok: true, value: files };
}

/**
 * The patch files pnpm applies: the values of `patchedDependencies` in pnpm-workspace.yaml
 * (pnpm 10) and in package.json's `pnpm` field (earlier versions), each once.
 */
export function pnpmPatches(workspaceText: string, manifest: Record<string, unknown> | null): string[] {
  const paths = new Set<string>();
  const section = /^patchedDependencies:\n((?:[ \t].*\n|\n)*)/m.exec(`${workspaceText}\n`)?.[1] ?? '';
  for (const line of section.split('\n')) {
    const path = /^\s+(?:(['"]).+?\1|[^\s#]+)\s*:\s*(['"]?)([^'"#]+?)\2\s*(?:#.*)?$/.exec(line)?.[3];
    if (path !== undefined) paths.add(path.replace(/^\.\//, ''));
  }
  const pnpm = manifest?.pnpm;
  const patched = typeof pnpm === 'object' && pnpm !== null ? (pnpm as Record<string, unknown>).patchedDependencies : undefined;
  if (typeof patched === 'object' && patched !== null) {
    for (const value of Object.values(patched)) if (typeof value === 'string') paths.add(value.replace(/^\.\//, ''));
  }
  return [...paths].sort();
}

function normalPattern(pattern: string): string {
  return pattern.replace(/^\.\//, '').replace(/\/+$/, '');
}

/** The folders before a pattern's first glob (`packages` of `packages/*`), where its matches lie. */
function staticPrefix(pattern: string): string {
  const segments = pattern.split('/');
  const glob = segments.findIndex((segment) => /[*?]/.test(segment));
  return (glob === -1 ? segments : segments.slice(0, glob)).join('/');
}

function patternRegex(pattern: string): RegExp {
  const source = pattern
    .split('/')
    .map((segment) => (segment === '**' ? '(?:.+)' : segment.replace(/[.+^$()|\\]/g, '\\$&').replace(/\*/g, '[^/]*').replace(/\?/g, '[^/]')))
    .join('/');
  return new RegExp(`^${source}$`);
}
