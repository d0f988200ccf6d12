import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALLOWED_IMPORTS, ROOM_IMPORTS, roomsOnDisk } from './layers.js';

const MAP_MARKER = '<!-- The map is test/architecture/layers.ts written out';

/** The map of layers and rooms in docs/architecture.md: each name and what it may import. */
function mapInDocs(): Map<string, string[]> {
  const text = readFileSync(resolve(import.meta.dirname, '../../docs/architecture.md'), 'utf8');
  const block = /```text\n([\s\S]*?)\n```/.exec(text.slice(text.indexOf(MAP_MARKER)))?.[1] ?? '';
  const map = new Map<string, string[]>();
  for (const line of block.split('\n')) {
    const match = /^\s*([a-z/-]+)\s+→\s+(.*)$/.exec(line);
    if (match === null) continue;
    const targets = (match[2] ?? '').startsWith('(') ? [] : (match[2] ?? '').split(', ');
    map.set(match[1] ?? '', targets);
  }
  return map;
}

describe('the map of layers and rooms in docs/architecture.md', () => {
  it('names every layer with the layers it may import, as the layer test has them', () => {
    const map = mapInDocs();
    expect(Object.keys(ALLOWED_IMPORTS).map((layer) => [layer, map.get(layer)])).toEqual(Object.entries(ALLOWED_IMPORTS));
  });

  it('names every room on disk with the rooms it may import, and no room that is not on disk', () => {
    const map = mapInDocs();
    const roomsInDocs = [...map.keys()].filter((name) => name.includes('/')).sort();
    expect(roomsInDocs).toEqual(roomsOnDisk(resolve(import.meta.dirname, '../../src')));
    const declared = Object.entries(ROOM_IMPORTS).flatMap(([layer, rooms]) => Object.entries(rooms).map(([room, targets]) => [`${layer}/${room}`, targets]));
    expect(declared.map(([name]) => [name, map.get(name as string)])).toEqual(declared);
  });
});
