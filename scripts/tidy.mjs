#!/usr/bin/env node
// The tidy check that `npm test` runs first: lines at most 120 columns, functions at most 70 lines,
// every cited document and src/ or tests/ path present, no internal issue numbers, no citations of
// documents a reader of the repository cannot open, and imports that point down the layers of
// docs/architecture.md.
//
//   node scripts/tidy.mjs          check; exit 1 on a violation
//   node scripts/tidy.mjs --fix    first format with prettier (.prettierrc) and reflow comment lines
//                                  over 120 columns, then check
//   --prune-baseline               also drop scripts/tidy-baseline.json entries that no longer match
//
// The fix is deterministic and idempotent: a second run changes nothing. Violations listed in
// scripts/tidy-baseline.json are reported as known, not failures, until someone removes them there.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const lineColumnsMax = 120;
export const functionLinesMax = 70;

/** Folders whose files the check reads, relative to the repository root. */
const scopeRoots = [
  'src',
  'tests',
  'bench',
  'scripts',
  'explorer/src',
  'explorer/static',
  'packages/toolkit/src',
  'packages/toolkit/test',
  'packages/toolkit/examples',
  'docs',
];
/** Markdown files outside those folders that are checked too. */
const scopeFiles = ['README.md', 'packages/toolkit/README.md'];
const skippedFolders = new Set(['node_modules', 'dist', '.git']);
const codeExtensions = new Set(['.ts', '.mts', '.mjs', '.js', '.css', '.html']);
const prettierExtensions = new Set(['.ts', '.mts', '.mjs', '.js', '.css']);
const syntaxExtensions = new Set(['.ts', '.mts', '.mjs', '.js']);

/** Calls whose callbacks are containers of tests, not functions with one job: their length is not counted. */
const suiteCallees = new Set(['describe', 'suite', 'describe.skip', 'describe.only', 'suite.skip', 'suite.only']);

// The names of private reference documents, spelled so that this file does not match itself.
const privateDocNames = ['operations', 'data-model', 'errors', 'query', 'batch', 'auth', 'conformance-notes', 'STYLE'];
const privateDocPattern = new RegExp(`\\b(?:${privateDocNames.join('|')})\\.md\\b|\\bconformance(?:-notes)? \\u00a7`);
// A section sign outside an RFC citation points into a document readers cannot open.
const bareSectionPattern = /(?<!RFC \d+ )\u00a7/;
const issuePattern = /\bissues? #?\d+\b|\bissue-\d+\b/i;
// A page name has a hyphen, which tells it from the prose that may follow a citation (`…, unverified`).
const azureCitePattern = /Azure REST: ([a-z0-9]+(?:-[a-z0-9]+)+(?:, [a-z0-9]+(?:-[a-z0-9]+)+(?![\w/.]))*)/g;
const docCitePattern = /(?<![\w./-])((?:\.\.\/)*docs\/[\w./-]*[\w-]\.(?:md|png))(#[\w-]+)?/g;
const readmeCitePattern = /\bREADME(?:\.md)? "([^"]+)"|\bREADME\.md#([\w-]+)/g;
const markdownLinkPattern = /\]\(([^)\s]+)\)/g;
// A path into the sources or the tests (`src/table/definition.ts`, `tests/system/`), not part of a longer
// path (`dist/tests/…`, `packages/toolkit/src/…`) or a word; with a `*` it is a pattern some file must match.
const treePathPattern = /(?<![\w./@$*-])((?:src|tests)\/[\w./*-]*[\w/*-])/g;
// A Markdown file named without its folder (`architecture.md`): it must exist somewhere in the repository.
// A link's target (`](guide.md)`) is checked as a link instead.
const bareDocPattern = /(?<![\w./-]|\]\()([\w-]+(?:\.[\w-]+)*\.md)\b(?![\w/-])/g;
const urlPattern = /https?:\/\/\S+/g;

/** Every file in scope, as paths relative to `root` with forward slashes, sorted. */
export function listFiles(root) {
  const found = [];
  const walk = (folder) => {
    for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
      const path = posix.join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!skippedFolders.has(entry.name)) walk(path);
      } else if (entry.isFile() && (codeExtensions.has(extname(entry.name)) || entry.name.endsWith('.md'))) {
        found.push(path);
      }
    }
  };
  for (const folder of scopeRoots) if (existsSync(join(root, folder))) walk(folder);
  for (const file of scopeFiles) if (existsSync(join(root, file))) found.push(file);
  return [...new Set(found)].sort();
}

function lineOf(text, offset) {
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function scriptKind(path) {
  return path.endsWith('.ts') || path.endsWith('.mts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
}

function parse(path, text) {
  return ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, scriptKind(path));
}

/** Every comment of a source file as [start, end) offsets, in order, found through the parser. */
export function commentRanges(source) {
  const text = source.text;
  const seen = new Map();
  const add = (ranges) => {
    for (const range of ranges ?? []) seen.set(range.pos, range);
  };
  const visit = (node) => {
    add(ts.getLeadingCommentRanges(text, node.pos));
    add(ts.getTrailingCommentRanges(text, node.end));
    for (const child of node.getChildren(source)) visit(child);
  };
  visit(source);
  return [...seen.values()].sort((a, b) => a.pos - b.pos);
}

function calleeName(call) {
  const expression = call.expression;
  if (ts.isIdentifier(expression)) return expression.text;
  if (ts.isPropertyAccessExpression(expression) && ts.isIdentifier(expression.expression)) {
    return `${expression.expression.text}.${expression.name.text}`;
  }
  return undefined;
}

function functionName(node) {
  if (node.name !== undefined && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) return node.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isPropertyAssignment(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  if (ts.isCallExpression(parent)) {
    const first = parent.arguments[0];
    const label = first !== undefined && ts.isStringLiteralLike(first) ? ` '${first.text}'` : '';
    return `${calleeName(parent) ?? 'call'}${label} callback`;
  }
  return '(anonymous)';
}

/** Functions longer than `functionLinesMax` lines, with their name and first line. */
export function longFunctions(path, text) {
  const source = parse(path, text);
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const parent = node.parent;
      const isSuite = ts.isCallExpression(parent) && suiteCallees.has(calleeName(parent) ?? '');
      const start = lineOf(text, node.getStart(source));
      const lines = lineOf(text, node.end) - start + 1;
      if (!isSuite && lines > functionLinesMax) found.push({ name: functionName(node), line: start, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Module specifiers of a file's static imports and re-exports, with their lines. */
function importsOf(path, text) {
  const source = parse(path, text);
  const found = [];
  for (const statement of source.statements) {
    const specifier = statement.moduleSpecifier;
    if ((ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && specifier !== undefined) {
      if (ts.isStringLiteral(specifier))
        found.push({ specifier: specifier.text, line: lineOf(text, statement.pos + 1) });
    }
  }
  return found;
}

/**
 * Imports from a tool (the explorer, the toolkit) into src/: tools are clients of the public API.
 * The layers inside src/ are checked by tests/layers.test.ts.
 */
export function importViolations(path, text) {
  const found = [];
  if (!path.startsWith('explorer/') && !path.startsWith('packages/toolkit/')) return found;
  for (const { specifier, line } of importsOf(path, text)) {
    if (!specifier.startsWith('.')) continue;
    const target = posix.normalize(posix.join(posix.dirname(path), specifier)).replace(/\.js$/, '.ts');
    if (target.startsWith('src/')) {
      found.push({ line, message: `a tool imports ${target}: tools are clients of the public API` });
    }
  }
  return found;
}

/** GitHub's anchor for a Markdown heading. */
export function headingSlug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function headingsOf(root, path) {
  const file = join(root, path);
  if (!existsSync(file) || !statSync(file).isFile()) return undefined;
  const slugs = new Set();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const match = !fenced && /^#{1,6} (.*)$/.exec(line);
    if (match) slugs.add(headingSlug(match[1]));
  }
  return slugs;
}

/** Page names of the Azure REST reference that docs/protocol-notes.md lists. */
function azurePages(root) {
  const file = join(root, 'docs/protocol-notes.md');
  if (!existsSync(file)) return new Set();
  return new Set([...readFileSync(file, 'utf8').matchAll(/^\| `([a-z0-9-]+)` \|/gm)].map((m) => m[1]));
}

/** Broken document citations in one line; `path` is the file the line is in. */
function citationViolations(root, path, line, context) {
  const found = [];
  const anchorMissing = (target, anchor) => {
    const slugs = headingsOf(root, target);
    if (slugs === undefined) return `cites ${target}, which does not exist`;
    if (anchor !== undefined && target.endsWith('.md') && !slugs.has(anchor))
      return `cites ${target}#${anchor}, no such section`;
    return undefined;
  };
  for (const match of line.matchAll(docCitePattern)) {
    const target = match[1].startsWith('..') ? posix.normalize(posix.join(posix.dirname(path), match[1])) : match[1];
    const problem = anchorMissing(target.replace(/^(\.\.\/)+/, ''), match[2]?.slice(1));
    if (problem !== undefined) found.push(problem);
  }
  for (const match of line.matchAll(readmeCitePattern)) {
    const anchor = match[1] !== undefined ? headingSlug(match[1]) : match[2];
    if (!(headingsOf(root, 'README.md') ?? new Set()).has(anchor))
      found.push(`cites README section "${anchor}", no such section`);
  }
  for (const match of line.matchAll(azureCitePattern)) {
    for (const page of match[1].split(', ')) {
      if (!context.azurePages.has(page))
        found.push(`cites Azure REST page ${page}, not listed in docs/protocol-notes.md`);
    }
  }
  for (const match of line.matchAll(treePathPattern)) {
    if (!treePathExists(root, path, match[1])) found.push(`cites ${match[1]}, which does not exist`);
  }
  for (const match of line.matchAll(bareDocPattern)) {
    if (!privateDocPattern.test(match[1]) && !context.fileNames().has(match[1]))
      found.push(`cites ${match[1]}, which is in no folder of the repository`);
  }
  if (path.endsWith('.md')) {
    for (const match of line.matchAll(markdownLinkPattern)) {
      const [target, anchor] = match[1].split('#');
      if (/^[a-z]+:/i.test(target)) continue;
      const resolved = target === '' ? path : posix.normalize(posix.join(posix.dirname(path), target));
      const problem = anchorMissing(resolved, anchor);
      if (problem !== undefined) found.push(problem);
    }
  }
  return found;
}

/**
 * Whether a cited `src/…` or `tests/…` path exists, from the repository's root or from a folder the
 * citing file is in (a package's README cites its own `src/`). A path cited by its compiled name
 * (`.js`) counts when its TypeScript source exists.
 */
function treePathExists(root, citingPath, cited) {
  const trimmed = cited.replace(/\.$/, '');
  if (trimmed.includes('*')) return globMatches(root, trimmed);
  const candidates = [trimmed, trimmed.replace(/\.js$/, '.ts'), trimmed.replace(/\.mjs$/, '.mts')];
  for (let folder = posix.dirname(citingPath); ; folder = posix.dirname(folder)) {
    const base = folder === '.' ? root : join(root, folder);
    if (candidates.some((candidate) => existsSync(join(base, candidate)))) return true;
    if (folder === '.') return false;
  }
}

/** Whether some file or folder matches a cited pattern whose `*` stands for any part of one name. */
function globMatches(root, pattern) {
  let folders = [''];
  for (const part of pattern.replace(/\/$/, '').split('/')) {
    const name = new RegExp(`^${part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*')}$`);
    folders = folders.flatMap((folder) => {
      const full = join(root, folder);
      if (!existsSync(full) || !statSync(full).isDirectory()) return [];
      return readdirSync(full)
        .filter((entry) => name.test(entry))
        .map((entry) => posix.join(folder, entry));
    });
  }
  return folders.length > 0;
}

/** The names of every file in the repository, in any folder (node_modules, dist and .git left out). */
function repositoryFileNames(root) {
  const names = new Set();
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!skippedFolders.has(entry.name)) walk(join(folder, entry.name));
      } else names.add(entry.name);
    }
  };
  walk(root);
  return names;
}

/** Whether a long line is long only because of a URL that crosses the limit (it cannot be wrapped). */
function longBecauseOfUrl(line) {
  for (const match of line.matchAll(urlPattern)) {
    if (match.index < lineColumnsMax && match.index + match[0].length > lineColumnsMax - 10) return true;
  }
  return false;
}

function columns(line) {
  return [...line].length;
}

/** Every violation in one file, as { path, line, rule, message }. */
export function checkFile(root, path, context) {
  const text = readFileSync(join(root, path), 'utf8');
  const found = [];
  const report = (line, rule, message) => found.push({ path, line, rule, message });
  const isCode = codeExtensions.has(extname(path));
  const lines = text.split('\n');
  const syntax = syntaxExtensions.has(extname(path));
  const commentLines = isCode && syntax ? commentLineSet(path, text) : undefined;
  const literalLines = isCode && syntax ? longLiteralLines(path, text) : new Set();
  lines.forEach((line, index) => {
    const number = index + 1;
    if (isCode && columns(line) > lineColumnsMax && !longBecauseOfUrl(line) && !literalLines.has(number)) {
      report(number, 'line-length', `${columns(line)} columns (at most ${lineColumnsMax})`);
    }
    if (issuePattern.test(line)) report(number, 'issue-number', 'an internal issue number');
    if (privateDocPattern.test(line) || bareSectionPattern.test(line)) {
      report(number, 'private-citation', 'cites a document readers cannot open');
    }
    const citing = !isCode || commentLines === undefined || commentLines.has(number);
    if (citing)
      for (const message of citationViolations(root, path, line, context)) report(number, 'citation', message);
  });
  if (syntaxExtensions.has(extname(path))) {
    for (const f of longFunctions(path, text)) {
      report(f.line, 'function-length', `${f.name}: ${f.lines} lines (at most ${functionLinesMax})`);
    }
    for (const v of importViolations(path, text)) report(v.line, 'import-direction', v.message);
  }
  return found;
}

const literalKinds = new Set([
  ts.SyntaxKind.StringLiteral,
  ts.SyntaxKind.NoSubstitutionTemplateLiteral,
  ts.SyntaxKind.TemplateExpression,
  ts.SyntaxKind.TemplateHead,
  ts.SyntaxKind.TemplateMiddle,
  ts.SyntaxKind.TemplateTail,
  ts.SyntaxKind.RegularExpressionLiteral,
]);

/**
 * Lines (1-based) that are too long only because of one string, template or regular expression
 * literal on them: without it the line would fit. No formatter can break a literal without changing
 * its value (a test's title, an expected body), so, as ESLint's max-len with ignoreStrings does, the
 * length check leaves such a line alone.
 */
function longLiteralLines(path, text) {
  const source = parse(path, text);
  const lines = text.split('\n');
  const set = new Set();
  const visit = (node) => {
    if (literalKinds.has(node.kind)) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source));
      const end = source.getLineAndCharacterOfPosition(node.end);
      if (start.line === end.line) {
        const line = lines[start.line];
        const literalColumns = columns(line.slice(start.character, end.character));
        if (columns(line) - literalColumns <= lineColumnsMax) set.add(start.line + 1);
      }
    }
    node.getChildren(source).forEach(visit);
  };
  visit(source);
  return set;
}

/** Lines (1-based) that hold some part of a comment. */
function commentLineSet(path, text) {
  const set = new Set();
  for (const range of commentRanges(parse(path, text))) {
    for (let line = lineOf(text, range.pos); line <= lineOf(text, range.end); line++) set.add(line);
  }
  return set;
}

/** The baseline's key for a violation: line numbers move, names do not. */
function baselineKey(violation) {
  const message =
    violation.rule === 'function-length' ? violation.message.replace(/: \d+ lines.*$/, '') : violation.message;
  return `${violation.path} ${violation.rule} ${message}`;
}

function readBaseline(root) {
  const file = join(root, 'scripts/tidy-baseline.json');
  return existsSync(file) ? new Set(JSON.parse(readFileSync(file, 'utf8')).known) : new Set();
}

/** Checks every file under `root`: { violations, known }, where known ones are in the baseline. */
export function check(root) {
  let fileNames;
  const context = { azurePages: azurePages(root), fileNames: () => (fileNames ??= repositoryFileNames(root)) };
  const baseline = readBaseline(root);
  const violations = [];
  const known = [];
  for (const path of listFiles(root)) {
    for (const v of checkFile(root, path, context)) (baseline.has(baselineKey(v)) ? known : violations).push(v);
  }
  return { violations, known };
}

// ---- --fix ----

/** Splits `text` into pieces of at most `width` columns at spaces; a word longer than that stays whole. */
export function wrapWords(text, width) {
  const pieces = [];
  let rest = text;
  while (columns(rest) > width) {
    const head = [...rest].slice(0, width + 1).join('');
    let cut = head.lastIndexOf(' ');
    if (cut <= 0) cut = rest.indexOf(' ', width);
    if (cut <= 0) break;
    pieces.push(rest.slice(0, cut).trimEnd());
    rest = rest.slice(cut + 1).trimStart();
  }
  pieces.push(rest);
  return pieces;
}

/** One long line of a comment, rewritten as several; undefined when it is not a comment line we can wrap. */
function reflowLine(line, inComment) {
  const lineComment = /^(\s*)\/\/( ?)(.*)$/.exec(line);
  if (lineComment !== null && !inComment) {
    const [, indent, gap, body] = lineComment;
    const prefix = `${indent}//${gap || ' '}`;
    return wrapWords(body, lineColumnsMax - columns(prefix)).map((piece) => `${prefix}${piece}`.trimEnd());
  }
  const singleDoc = /^(\s*)\/\*\*\s(.*?)\s*\*\/\s*$/.exec(line);
  if (singleDoc !== null && !inComment) {
    const [, indent, body] = singleDoc;
    const pieces = wrapWords(body, lineColumnsMax - columns(indent) - 3);
    return [`${indent}/**`, ...pieces.map((piece) => `${indent} * ${piece}`.trimEnd()), `${indent} */`];
  }
  const middle = /^(\s*)\*( )(.*)$/.exec(line);
  if (middle !== null && inComment && !middle[3].includes('*/')) {
    const [, indent, , body] = middle;
    return wrapWords(body, lineColumnsMax - columns(indent) - 2).map((piece) => `${indent}* ${piece}`.trimEnd());
  }
  const opening = /^(\s*)\/\*\*( )(.*)$/.exec(line);
  if (opening !== null && !inComment && !opening[3].includes('*/')) {
    const [, indent, , body] = opening;
    const [first, ...rest] = wrapWords(body, lineColumnsMax - columns(indent) - 4);
    return [`${indent}/** ${first}`, ...rest.map((piece) => `${indent} * ${piece}`.trimEnd())];
  }
  return undefined;
}

/** A code line that ends in a `//` comment pushing it past the limit: the comment moves above it. */
function hoistTrailingComment(line, comment) {
  const code = line.slice(0, comment.pos).trimEnd();
  const indent = /^\s*/.exec(line)[0];
  if (code.trim() === '' || columns(code) > lineColumnsMax) return undefined;
  const body = line.slice(comment.pos + 2).trim();
  return [...wrapWords(body, lineColumnsMax - columns(indent) - 3).map((piece) => `${indent}// ${piece}`), code];
}

/** Rewrites comment lines over the limit; returns the new text (the same text when nothing was long). */
export function reflowComments(path, text) {
  if (!text.split('\n').some((line) => columns(line) > lineColumnsMax)) return text;
  const ranges = commentRanges(parse(path, text));
  const lines = text.split('\n');
  const lineStarts = [];
  for (let i = 0, offset = 0; i < lines.length; offset += lines[i].length + 1, i++) lineStarts.push(offset);
  const out = [];
  lines.forEach((line, index) => {
    if (columns(line) <= lineColumnsMax || longBecauseOfUrl(line)) return void out.push(line);
    const start = lineStarts[index];
    const end = start + line.length;
    const inside = ranges.find((r) => r.pos < start && r.end > start);
    const trailing = ranges.find(
      (r) => r.pos > start && r.pos < end && r.kind === ts.SyntaxKind.SingleLineCommentTrivia,
    );
    const codeBefore = trailing !== undefined && line.slice(0, trailing.pos - start).trim() !== '';
    const rewritten = codeBefore
      ? hoistTrailingComment(line, { pos: trailing.pos - start })
      : ranges.some((r) => r.pos >= start && r.pos < end) || inside !== undefined
        ? reflowLine(line, inside !== undefined)
        : undefined;
    out.push(...(rewritten ?? [line]));
  });
  return out.join('\n');
}

// Citations of the private reference, rewritten to the public pages (docs/protocol-notes.md lists
// them) for text merged in from elsewhere. A document's sections map to pages; '' is the whole document.
const payload = 'payload-format-for-table-service-operations';
const dataModel = 'understanding-the-table-service-data-model';
const operationPages = {
  1: payload,
  1.3: 'addressing-table-service-resources',
  1.4: 'merge-entity',
  1.5: 'setting-timeouts-for-table-service-operations',
  1.6: 'docs/protocol-notes.md#unknown-input-is-ignored',
  2: 'operations-on-tables',
  2.1: 'query-tables',
  2.2: 'create-table',
  2.3: 'delete-table',
  2.4: 'query-tables',
  3: 'get-table-acl',
  3.2: 'set-table-acl',
  4: 'get-table-service-properties',
  4.2: 'set-table-service-properties',
  4.3: 'get-table-service-stats',
  4.4: 'preflight-table-request',
  5: 'operations-on-entities',
  5.1: 'insert-entity',
  5.2: 'query-entities',
  5.3: 'query-entities',
  5.4: 'update-entity2',
  5.5: 'merge-entity',
  5.6: 'delete-entity1',
  5.7: 'insert-or-replace-entity',
  5.8: 'insert-or-merge-entity',
  '': 'operations-on-entities',
};
const noteAnchors = {
  10: 'continuation-headers',
  25: 'numbers-in-responses',
  27: 'annotated-values-as-strings',
  29: 'control-members-in-request-bodies',
  33: 'order-of-results',
  47: 'keys-with-unescaped-quotes',
  48: 'unknown-input-is-ignored',
  49: 'xml-bodies',
};
const top = (section) => section.split('.')[0];
const pageOf = {
  [privateDocNames[0]]: (section) => operationPages[section] ?? operationPages[top(section)] ?? operationPages[''],
  [privateDocNames[1]]: (section) => (top(section) === '2' ? payload : dataModel),
  [privateDocNames[2]]: (section) =>
    ['4.2', '4.3'].includes(section)
      ? 'common-rest-api-error-codes'
      : ['1', '2', '3'].includes(section)
        ? 'status-and-error-codes2'
        : 'table-service-error-codes',
  [privateDocNames[3]]: (section) =>
    section === '5'
      ? 'docs/architecture.md#queries'
      : top(section) === '4'
        ? 'query-timeout-and-pagination'
        : 'querying-tables-and-entities',
  [privateDocNames[4]]: () => 'performing-entity-group-transactions',
  [privateDocNames[5]]: (section) =>
    ({ 7: 'create-service-sas', 9: 'create-service-sas', 8: 'create-account-sas' })[top(section)] ??
    (top(section) === '10' ? 'authorize-with-azure-active-directory' : 'authorize-with-shared-key'),
  [privateDocNames[6]]: (section) => `docs/protocol-notes.md${noteAnchors[section] ? `#${noteAnchors[section]}` : ''}`,
};
const sectionNumber = '(?:\\d+(?:\\.\\d+)?|[A-G])';
const sectionText = `\u00a7 ?${sectionNumber}`;
const privateCitation = new RegExp(
  `\\b(${privateDocNames.slice(0, 7).join('|')})\\.md((?: ${sectionText}(?:(?: ?[\u2013-] ?\u00a7?|, \u00a7|(?: and) \u00a7) ?${sectionNumber}(?!\\w))*)?)`,
  'g',
);

/** A list of sections (`2.1–2.3, 5`, each after a section sign) → ['2.1', '2.2', '2.3', '5']. */
function sectionsOf(text) {
  const found = [];
  for (const part of text.split(/, | and /)) {
    const [from, to] = part.split(/ ?[\u2013-] ?/).map((s) => s.replace(/\u00a7 ?/, '').trim());
    if (from === '') continue;
    found.push(from);
    if (to === undefined) continue;
    const [major, minorFrom] = from.split('.');
    const minorTo = to.includes('.') ? to.split('.')[1] : to;
    const [start, end] = minorFrom === undefined ? [Number(major), Number(to)] : [Number(minorFrom), Number(minorTo)];
    for (let n = start + 1; n <= end; n++) found.push(minorFrom === undefined ? String(n) : `${major}.${n}`);
  }
  return found.length === 0 ? [''] : found;
}

/** Rewrites citations of the private reference into public pages and notes under docs/. */
export function rewriteCitations(text) {
  const rewritten = text.replace(privateCitation, (_, name, sections) => {
    const targets = [...new Set(sectionsOf(sections.trim()).map((section) => pageOf[name](section)))];
    const pages = targets.filter((t) => !t.startsWith('docs/'));
    const notes = targets.filter((t) => t.startsWith('docs/'));
    return [...(pages.length > 0 ? [`Azure REST: ${pages.join(', ')}`] : []), ...notes].join('; ');
  });
  return rewritten
    .replace(/\bconformance(?:-notes)? \u00a7(\d+)/g, (_, n) => pageOf[privateDocNames[6]](n))
    .replace(/Azure REST: ([a-z0-9, -]+?)(?:, |; | and )Azure REST: /g, 'Azure REST: $1, ');
}

/** Formats every code file in scope with prettier and reflows long comment lines; returns the paths changed. */
export async function fix(root) {
  const prettier = await import('prettier');
  const changed = [];
  for (const path of listFiles(root)) {
    if (!prettierExtensions.has(extname(path))) continue;
    const file = join(root, path);
    const before = readFileSync(file, 'utf8');
    const options = { ...(await prettier.resolveConfig(file)), filepath: file };
    let text = await prettier.format(rewriteCitations(before), options);
    if (syntaxExtensions.has(extname(path))) {
      const reflowed = reflowComments(path, text);
      if (reflowed !== text) text = await prettier.format(reflowed, options);
    }
    if (text !== before) {
      writeFileSync(file, text);
      changed.push(path);
    }
  }
  return changed;
}

/** Drops the baseline's entries that no longer match a violation (fixed, renamed or deleted); never adds one. */
function pruneBaseline(root, known) {
  const file = join(root, 'scripts/tidy-baseline.json');
  if (!existsSync(file)) return;
  const baseline = JSON.parse(readFileSync(file, 'utf8'));
  const live = new Set(known.map(baselineKey));
  const kept = baseline.known.filter((key) => live.has(key));
  process.stderr.write(`tidy: ${baseline.known.length - kept.length} baseline entry(ies) no longer needed, removed\n`);
  writeFileSync(file, `${JSON.stringify({ ...baseline, known: kept }, null, 2)}\n`);
}

function printViolation(v) {
  return `${v.path}:${v.line}: [${v.rule}] ${v.message}`;
}

async function main(args) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  if (args.includes('--fix')) {
    const changed = await fix(root);
    process.stderr.write(`tidy --fix: ${changed.length} file(s) rewritten\n`);
  }
  const { violations, known } = check(root);
  if (args.includes('--prune-baseline')) pruneBaseline(root, known);
  if (known.length > 0) {
    process.stderr.write(`tidy: ${known.length} known violation(s) in scripts/tidy-baseline.json, still to fix:\n`);
    for (const v of known) process.stderr.write(`  ${printViolation(v)}\n`);
  }
  for (const v of violations) process.stderr.write(`${printViolation(v)}\n`);
  if (violations.length > 0) {
    process.stderr.write(
      `tidy: ${violations.length} violation(s); \`node scripts/tidy.mjs --fix\` fixes formatting.\n`,
    );
    process.exit(1);
  }
  process.stderr.write('tidy: ok\n');
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main(process.argv.slice(2));
}
