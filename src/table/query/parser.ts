// $filter parser: recursive descent, one method per rule of Azure REST: querying-tables-and-entities, bounded by
// filterLengthUtf16Max, filterDepthMax and filterComparisonsMax so hostile input costs little.
//
//   filter      = ws orExpr ws
//   orExpr      = andExpr *( rws "or" rws andExpr )
//   andExpr     = notExpr *( rws "and" rws notExpr )
//   notExpr     = "not" rws notExpr / primary          ; also "not(" … ")"
//   primary     = "(" ws orExpr ws ")" / comparison
//   comparison  = operand rws cmpOp rws operand         ; exactly one side a property, the
//                                                      ; literal on either side (recommendation)
//               / boolLiteral / propertyName            ; bare forms (unverified)
//   operand     = propertyName / literal                ; literal forms: see lexer.ts
//
// Precedence: comparison > not > and > or. Functions, arithmetic and `in`/`has` answer
// 501 NotImplemented as the service does for `startswith(…)`; everything else malformed is
// 400 InvalidInput with the offset and what was expected.
import { StorageError } from '../../errors.js';
import { filterComparisonsMax, filterDepthMax, filterLengthUtf16Max } from '../../limits.js';
import { printLiteral } from './ast.js';
import type { ComparisonOperator, FilterNode } from './ast.js';
import { excerpt, invalidFilter, Lexer } from './lexer.js';
import type { Token } from './lexer.js';

/**
 * OData operators that are words, not functions: arithmetic and membership (Azure REST: querying-tables-and-entities).
 */
const unsupportedOperators: ReadonlySet<string> = new Set(['add', 'sub', 'mul', 'div', 'mod', 'in', 'has']);

const mirrored: Readonly<Record<ComparisonOperator, ComparisonOperator>> = {
  eq: 'eq',
  ne: 'ne',
  gt: 'lt',
  ge: 'le',
  lt: 'gt',
  le: 'ge',
};

type Operand = Extract<Token, { kind: 'name' | 'literal' }>;

/** Parses filter text into its tree. Throws StorageError (InvalidInput or NotImplemented). */
export function parseFilter(text: string): FilterNode {
  if (text.length > filterLengthUtf16Max) {
    throw invalidFilter(filterLengthUtf16Max, `The filter is longer than ${filterLengthUtf16Max} characters`);
  }
  return new Parser(new Lexer(text)).parseFilter();
}

class Parser {
  private token: Token;
  private depth = 0;
  private comparisons = 0;

  constructor(private readonly lexer: Lexer) {
    this.token = lexer.next();
  }

  parseFilter(): FilterNode {
    const node = this.parseOr();
    if (this.token.kind !== 'end') this.fail("'and', 'or' or the end of the filter");
    return node;
  }

  private parseOr(): FilterNode {
    const operands = [this.parseAnd()];
    while (this.token.kind === 'or') {
      this.advance();
      operands.push(this.parseAnd());
    }
    return operands.length === 1 ? operands[0]! : { kind: 'or', operands };
  }

  private parseAnd(): FilterNode {
    const operands = [this.parseNot()];
    while (this.token.kind === 'and') {
      this.advance();
      operands.push(this.parseNot());
    }
    return operands.length === 1 ? operands[0]! : { kind: 'and', operands };
  }

  private parseNot(): FilterNode {
    if (this.token.kind !== 'not') return this.parsePrimary();
    this.enterNesting();
    this.advance();
    const operand = this.parseNot();
    this.depth--;
    return { kind: 'not', operand };
  }

  private parsePrimary(): FilterNode {
    if (this.token.kind !== 'open') return this.parseComparison();
    this.enterNesting();
    this.advance();
    const node = this.parseOr();
    this.expect('close', "')'");
    this.depth--;
    return node;
  }

  private parseComparison(): FilterNode {
    const left = this.parseOperand();
    if (this.token.kind !== 'operator') return this.bareOperand(left);
    const operator = this.token.operator;
    this.advance();
    const right = this.parseOperand();
    this.countComparison(left.offset);
    if (left.kind === 'name' && right.kind === 'literal') {
      return { kind: 'comparison', property: left.name, operator, literal: right.literal };
    }
    if (left.kind === 'literal' && right.kind === 'name') {
      return { kind: 'comparison', property: right.name, operator: mirrored[operator], literal: left.literal };
    }
    // Property-to-property (forbidden by the docs, code unverified) and literal-to-literal. Python's
    // `inf`/`nan` and .NET's `NaN` read as property names, so they land here too (Azure REST:
    // querying-tables-and-entities).
    throw invalidFilter(left.offset, 'A comparison needs a property name on one side and a literal on the other');
  }

  private parseOperand(): Operand {
    const token = this.token;
    if (token.kind !== 'name' && token.kind !== 'literal') return this.fail('a property name or a literal');
    this.advance();
    if (token.kind === 'name' && this.token.kind === 'open') throw new StorageError('NotImplemented');
    return token;
  }

  /** `true` / `false` and a bare property (meaning `Prop eq true`) stand alone (unverified forms). */
  private bareOperand(operand: Operand): FilterNode {
    const next = this.token.kind;
    if (next !== 'and' && next !== 'or' && next !== 'close' && next !== 'end') {
      return this.fail('a comparison operator (eq, ne, gt, ge, lt, le)');
    }
    if (operand.kind === 'name') {
      this.countComparison(operand.offset);
      const literal = { type: 'Edm.Boolean', value: true } as const;
      return { kind: 'comparison', property: operand.name, operator: 'eq', literal };
    }
    if (operand.literal.type === 'Edm.Boolean') return { kind: 'constant', value: operand.literal.value };
    throw invalidFilter(operand.offset, `The literal ${excerpt(printLiteral(operand.literal))} is not a condition`);
  }

  private countComparison(offset: number): void {
    if (++this.comparisons > filterComparisonsMax) {
      throw invalidFilter(offset, `More than ${filterComparisonsMax} comparisons`);
    }
  }

  private enterNesting(): void {
    if (++this.depth > filterDepthMax) {
      throw invalidFilter(this.token.offset, `Parentheses and 'not' nested deeper than ${filterDepthMax} levels`);
    }
  }

  private expect(kind: Token['kind'], expected: string): void {
    if (this.token.kind !== kind) this.fail(expected);
    this.advance();
  }

  private advance(): void {
    this.token = this.lexer.next();
  }

  private fail(expected: string): never {
    const token = this.token;
    if (token.kind === 'name' && unsupportedOperators.has(token.name)) throw new StorageError('NotImplemented');
    throw invalidFilter(token.offset, `Expected ${expected} but found ${describe(token)}`);
  }
}

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'the end of the filter';
    case 'open':
      return "'('";
    case 'close':
      return "')'";
    case 'and':
    case 'or':
    case 'not':
      return `'${token.kind}'`;
    case 'operator':
      return `'${token.operator}'`;
    case 'name':
      return `'${excerpt(token.name)}'`;
    case 'literal':
      return excerpt(printLiteral(token.literal));
    default: {
      const unreachable: never = token;
      throw new Error(`unknown token ${String(unreachable)}`);
    }
  }
}
