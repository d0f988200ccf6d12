import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './layers.js';

const sourceRoot = resolve(import.meta.dirname, '../../src');

/**
 * The failures a file's types declare without saying what went wrong: every object type with
 * `ok: false` must have an `error` (the one shape of a result union), as `file:line`.
 */
function failuresWithoutError(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isTypeLiteralNode(node)) {
      const names = new Map(node.members.flatMap((member) => (ts.isPropertySignature(member) && ts.isIdentifier(member.name) ? [[member.name.text, member] as const] : [])));
      const ok = names.get('ok')?.type;
      // `{ ok: false }` alone narrows a union (`Extract<R, { ok: false }>`); it declares nothing.
      const declares = names.size > 1;
      if (declares && ok !== undefined && ts.isLiteralTypeNode(ok) && ok.literal.kind === ts.SyntaxKind.FalseKeyword && !names.has('error')) {
        found.push(`${relative(sourceRoot, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('result unions', () => {
  it('say what went wrong in `error` wherever a type declares `ok: false`', () => {
    const found = sourceFiles(sourceRoot).flatMap((file) => failuresWithoutError(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it('flags a failure that names its message otherwise, and passes one that carries `error` beside other fields, and a narrowing', () => {
    const file = resolve(sourceRoot, 'workspace', 'example.ts');
    const text = [
      'export type Opened = { readonly ok: true; readonly fd: number } | { readonly ok: false; readonly reason: string };',
      'export type Checked =',
      '  | { readonly ok: true }',
      '  | { readonly ok: false; readonly error: string; readonly conflict: string };',
      'export type Refused = Extract<Checked, { ok: false }>;',
    ].join('\n');
    expect(failuresWithoutError(file, text)).toEqual(['workspace/example.ts:1']);
  });
});
