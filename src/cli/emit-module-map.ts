/**
 * `npm run docs:map`: writes the module map (src/module-map.json, the list the lint enforces) into
 * docs/development.md, between the marker comment and the end of the fenced block after it. A test fails when the
 * docs differ from what this writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../platform/package-root';

const ROOT = packageRoot(__dirname);
export const MODULE_MAP_FILE = path.join(ROOT, 'src/module-map.json');
export const DEVELOPMENT_DOC = path.join(ROOT, 'docs/development.md');
const MARKER = '<!-- module-map: written by `npm run docs:map` from src/module-map.json; do not edit by hand -->';

export type ModuleMap = Record<string, string[]>;

export function readModuleMap(): ModuleMap {
  return JSON.parse(readFileSync(MODULE_MAP_FILE, 'utf8')) as ModuleMap;
}

/** One line per module, in the list's order: `module ──► what it may use`. */
export function renderModuleMap(map: ModuleMap): string {
  const width = Math.max(...Object.keys(map).map((name) => name.length));
  return Object.entries(map)
    .map(([name, uses]) => `${name} ${'─'.repeat(width - name.length + 2)}► ${uses.join(', ') || '(no other module)'}`)
    .join('\n');
}

/** The document with its module-map block replaced by the list as it stands. */
export function withModuleMap(doc: string, map: ModuleMap): string {
  const start = doc.indexOf(MARKER);
  if (start === -1) throw new Error(`docs/development.md lacks the marker line ${MARKER}`);
  const body = doc.indexOf('```\n', start + MARKER.length) + 4;
  const fenceClose = doc.indexOf('\n```', body - 1) + 1;
  if (body < 4 || fenceClose < body) throw new Error('docs/development.md: no fenced block after the module-map marker');
  return `${doc.slice(0, body)}${renderModuleMap(map)}\n${doc.slice(fenceClose)}`;
}

if (require.main === module) {
  const doc = readFileSync(DEVELOPMENT_DOC, 'utf8');
  writeFileSync(DEVELOPMENT_DOC, withModuleMap(doc, readModuleMap()));
  console.log(`written: ${DEVELOPMENT_DOC}`);
}
