// Tag expressions: Find Blobs by Tags' `where` and the x-ms-if-tags conditional header
// (https://learn.microsoft.com/azure/storage/blobs/storage-manage-find-blobs, "Operators"; find-blobs-by-tags;
// specifying-conditional-headers-for-blob-service-operations). Keys in double quotes (or bare),
// values in single quotes, compared as strings (lexicographically, case-sensitive).
// - `where`: =, >, >=, <, <= joined by AND only; `@container = '...'` at most once; two ranges on
//   one key only from opposite sides.
// - x-ms-if-tags: also <>, OR, and parentheses.
// Pure: text in, a tree out; evaluation against a blob's tags.
import type { TagSet } from './tag-set.js';

export type TagOperator = '=' | '<>' | '>' | '>=' | '<' | '<=';

export interface TagPredicate {
  readonly kind: 'predicate';
  readonly key: string;
  readonly operator: TagOperator;
  readonly value: string;
}

export type TagExpression = TagPredicate | { readonly kind: 'and' | 'or'; readonly parts: readonly TagExpression[] };

/** A `where` expression: its tag predicates (all must hold) and the container it names, if any. */
export interface WhereExpression {
  readonly predicates: readonly TagPredicate[];
  readonly container: string | undefined;
}

/** Thrown for text that is not an expression of its kind; the caller turns it into its 400. */
export class TagExpressionError extends Error {}

type Token =
  | { readonly kind: 'key'; readonly text: string }
  | { readonly kind: 'value'; readonly text: string }
  | { readonly kind: 'operator'; readonly text: TagOperator }
  | { readonly kind: 'word'; readonly text: 'AND' | 'OR' }
  | { readonly kind: '(' | ')' };

/** The longest expression text read (chosen: the service documents no limit; this bounds the work). */
const expressionLengthMax = 4096;

function tokenize(text: string): Token[] {
  if (text.length > expressionLengthMax) throw new TagExpressionError('The expression is too long.');
  const tokens: Token[] = [];
  const pattern = /\s*(?:"([^"]*)"|'([^']*)'|(<>|>=|<=|=|<|>)|(\(|\))|(@?[A-Za-z0-9_+\-./:]+))/y;
  let at = 0;
  while (at < text.length) {
    if (/^\s*$/.test(text.slice(at))) break;
    pattern.lastIndex = at;
    const match = pattern.exec(text);
    if (match === null) throw new TagExpressionError(`Unexpected text at offset ${at}.`);
    at = pattern.lastIndex;
    const [, quotedKey, value, operator, paren, word] = match;
    if (quotedKey !== undefined) tokens.push({ kind: 'key', text: quotedKey });
    else if (value !== undefined) tokens.push({ kind: 'value', text: value });
    else if (operator !== undefined) tokens.push({ kind: 'operator', text: operator as TagOperator });
    else if (paren !== undefined) tokens.push({ kind: paren as '(' | ')' });
    else if (/^(and|or)$/i.test(word!)) tokens.push({ kind: 'word', text: word!.toUpperCase() as 'AND' | 'OR' });
    else tokens.push({ kind: 'key', text: word! });
  }
  return tokens;
}

class Parser {
  private at = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly full: boolean,
  ) {}

  whole(): TagExpression {
    if (this.tokens.length === 0) throw new TagExpressionError('The expression is empty.');
    const expression = this.or();
    if (this.at < this.tokens.length) throw new TagExpressionError('The expression has text after its end.');
    return expression;
  }

  private or(): TagExpression {
    const parts = [this.and()];
    while (this.word('OR')) {
      if (!this.full) throw new TagExpressionError('OR is not allowed here.');
      parts.push(this.and());
    }
    return parts.length === 1 ? parts[0]! : { kind: 'or', parts };
  }

  private and(): TagExpression {
    const parts = [this.primary()];
    while (this.word('AND')) parts.push(this.primary());
    return parts.length === 1 ? parts[0]! : { kind: 'and', parts };
  }

  private primary(): TagExpression {
    const token = this.tokens[this.at++];
    if (token?.kind === '(') {
      if (!this.full) throw new TagExpressionError('Parentheses are not allowed here.');
      const inner = this.or();
      if (this.tokens[this.at++]?.kind !== ')') throw new TagExpressionError('A parenthesis is not closed.');
      return inner;
    }
    if (token?.kind !== 'key') throw new TagExpressionError('A tag key was expected.');
    const operator = this.tokens[this.at++];
    if (operator?.kind !== 'operator') throw new TagExpressionError(`An operator was expected after ${token.text}.`);
    if (operator.text === '<>' && !this.full) throw new TagExpressionError('<> is not allowed here.');
    const value = this.tokens[this.at++];
    if (value?.kind !== 'value') throw new TagExpressionError('A value in single quotes was expected.');
    return { kind: 'predicate', key: token.text, operator: operator.text, value: value.text };
  }

  private word(text: 'AND' | 'OR'): boolean {
    const token = this.tokens[this.at];
    if (token?.kind !== 'word' || token.text !== text) return false;
    this.at++;
    return true;
  }
}

function checkKey(key: string): void {
  if (key.length === 0 || key.length > 128) throw new TagExpressionError('A tag key is 1 to 128 characters.');
}

/** An x-ms-if-tags expression. */
export function parseTagCondition(text: string): TagExpression {
  const expression = new Parser(tokenize(text), true).whole();
  forEachPredicate(expression, (predicate) => {
    if (predicate.key.startsWith('@')) throw new TagExpressionError('@container is not allowed in a condition.');
    checkKey(predicate.key);
  });
  return expression;
}

/** A Find Blobs by Tags `where` expression. */
export function parseWhere(text: string): WhereExpression {
  const expression = new Parser(tokenize(text), false).whole();
  const all = expression.kind === 'and' ? (expression.parts as TagPredicate[]) : [expression as TagPredicate];
  let container: string | undefined;
  const predicates: TagPredicate[] = [];
  for (const predicate of all) {
    if (predicate.key.startsWith('@')) {
      if (predicate.key !== '@container') throw new TagExpressionError(`${predicate.key} is not a known field.`);
      if (container !== undefined) throw new TagExpressionError('@container may appear only once.');
      if (predicate.operator !== '=') throw new TagExpressionError('@container is compared only with =.');
      container = predicate.value;
      continue;
    }
    checkKey(predicate.key);
    const sameSide = predicates.find(
      (other) =>
        other.key === predicate.key && side(other.operator) !== 0 && side(other.operator) === side(predicate.operator),
    );
    if (sameSide !== undefined) throw new TagExpressionError(`Two ranges on ${predicate.key} from the same side.`);
    predicates.push(predicate);
  }
  // Chosen (unverified): the service finds blobs by their tags; a where naming none is refused.
  if (predicates.length === 0) throw new TagExpressionError('The expression names no tag.');
  return { predicates, container };
}

/** Which side a range operator bounds: 1 lower (> >=), -1 upper (< <=), 0 neither (= <>). */
function side(operator: TagOperator): number {
  if (operator === '>' || operator === '>=') return 1;
  if (operator === '<' || operator === '<=') return -1;
  return 0;
}

function forEachPredicate(expression: TagExpression, visit: (predicate: TagPredicate) => void): void {
  if (expression.kind === 'predicate') visit(expression);
  else for (const part of expression.parts) forEachPredicate(part, visit);
}

/** Strings compare by code point; tag text is ASCII, where that is UTF-16 order too. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Whether a predicate holds for `value` (undefined: the blob has no such tag, and no predicate holds). */
export function holds(predicate: TagPredicate, value: string | undefined): boolean {
  if (value === undefined) return false;
  const order = compare(value, predicate.value);
  switch (predicate.operator) {
    case '=':
      return order === 0;
    case '<>':
      return order !== 0;
    case '>':
      return order > 0;
    case '>=':
      return order >= 0;
    case '<':
      return order < 0;
    case '<=':
      return order <= 0;
  }
}

/** Whether the expression holds for a blob with `tags`. */
export function matches(expression: TagExpression, tags: ReadonlyMap<string, string>): boolean {
  if (expression.kind === 'predicate') return holds(expression, tags.get(expression.key));
  if (expression.kind === 'and') return expression.parts.every((part) => matches(part, tags));
  return expression.parts.some((part) => matches(part, tags));
}

export function tagMap(tags: TagSet): Map<string, string> {
  return new Map(tags);
}
