import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from '../helpers/source-files';

/**
 * The house's size limits (docs/development.md): no source file in src/ over 400 lines, and no function over 80
 * lines unless the comment just above it says why it stays whole (the words "stays whole"). Page scripts count too.
 */
const SRC = path.resolve(__dirname, '../../src');
const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;

type FunctionNode = ts.FunctionLikeDeclaration;

function isFunction(node: ts.Node): node is FunctionNode {
  return (
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isArrowFunction(node) ||
    ts.isFunctionExpression(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node)
  );
}

/** The comments before the statement that holds the function (its declaration, or the const it is assigned to). */
function leadingComments(source: ts.SourceFile, node: ts.Node): string {
  let holder: ts.Node = node;
  while (holder.parent && !ts.isSourceFile(holder.parent) && !ts.isBlock(holder.parent) && !ts.isClassLike(holder.parent)) {
    holder = holder.parent;
  }
  const ranges = ts.getLeadingCommentRanges(source.text, holder.getFullStart()) ?? [];
  return ranges.map((range) => source.text.slice(range.pos, range.end)).join('\n');
}

function longFunctions(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > MAX_FUNCTION_LINES && !/stays whole/i.test(leadingComments(source, node))) {
        found.push(`${path.relative(SRC, file)}:${first + 1} ${node.name?.getText(source) ?? '(anonymous)'} ${lines} lines`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the house limits', () => {
  const files = sourceFiles(SRC);

  it(`no file in src/ is over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((file) => ({ file: path.relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ file, lines }) => `${file} ${lines} lines`);
    expect(long).toEqual([]);
  });

  it(`no function in src/ is over ${MAX_FUNCTION_LINES} lines without a comment saying why it stays whole`, () => {
    expect(files.flatMap(longFunctions)).toEqual([]);
  });
});
