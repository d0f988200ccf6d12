import { isDeepStrictEqual } from 'node:util';
import { parseJsonObject } from './input-files.js';

type Json = unknown;

/** What two sides changed in ways a key-by-key merge cannot settle: the first such key's path. */
class KeyConflict extends Error {}

/**
 * Merges two changes of one JSON object file, a package.json, key by key: a key only one side
 * changed takes that side's value, a key both sides set to the same value keeps it, and objects
 * both sides changed (`dependencies`, `scripts`) are merged the same way inside. Anything else
 * (one key given two values, an array changed on both sides) is a real conflict: null. Keys
 * keep main's order, the workspace's new keys after them, and an object whose keys both sides
 * kept sorted (npm sorts dependencies) stays sorted. Written back with main's indentation and
 * final newline.
 */
export function mergeJsonObjects(base: string, main: string, workspace: string): string | null {
  const [baseObject, mainObject, workspaceObject] = [parseJsonObject(base), parseJsonObject(main), parseJsonObject(workspace)];
  if (baseObject === null || mainObject === null || workspaceObject === null) return null;
  let merged: Json;
  try {
    merged = mergeValues(baseObject, mainObject, workspaceObject, '');
  } catch (error) {
    if (error instanceof KeyConflict) return null;
    throw error;
  }
  return `${JSON.stringify(merged, null, indentationOf(main))}${main.endsWith('\n') ? '\n' : ''}`;
}

function isObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mergeValues(base: Json, main: Json, workspace: Json, path: string): Json {
  if (isDeepStrictEqual(main, workspace)) return main;
  if (isDeepStrictEqual(base, main)) return workspace;
  if (isDeepStrictEqual(base, workspace)) return main;
  if (isObject(main) && isObject(workspace) && (base === undefined || isObject(base))) return mergeObjects(base ?? {}, main, workspace, path);
  throw new KeyConflict(path);
}

function mergeObjects(base: Record<string, Json>, main: Record<string, Json>, workspace: Record<string, Json>, path: string): Record<string, Json> {
  const keys = [...Object.keys(main), ...Object.keys(workspace).filter((key) => !Object.hasOwn(main, key))];
  const ordered = isSorted(Object.keys(main)) && isSorted(Object.keys(workspace)) ? [...keys].sort() : keys;
  const merged: Record<string, Json> = {};
  for (const key of ordered) {
    const value = mergeValues(base[key], main[key], workspace[key], `${path}/${key}`);
    // A key one side removed and the other left alone stays removed.
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

function isSorted(keys: readonly string[]): boolean {
  return keys.every((key, index) => index === 0 || (keys[index - 1] as string) <= key);
}

/** The indentation of the file's first indented line: a tab, or that many spaces; two when none. */
function indentationOf(text: string): string | number {
  const indent = /\n([ \t]+)\S/.exec(text)?.[1];
  if (indent === undefined) return 2;
  return indent.startsWith('\t') ? '\t' : indent.length;
}
