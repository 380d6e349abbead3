// A small, strict XML reader and writer for the XML bodies of the Table service (table ACLs,
// service properties, stats). Pure: text in, element tree out. It reads elements, attributes,
// character data, CDATA, the five predefined entities and character references; it skips the
// declaration, comments and processing instructions; it refuses DOCTYPE (no entity expansion).
// Every failure is 400 InvalidXmlDocument with the offset where reading stopped.
import { StorageError } from '../errors.js';
import { xmlDepthMax, xmlElementsMax } from '../limits.js';

export interface XmlElement {
  readonly name: string;
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: readonly XmlElement[];
  /** The element's own character data, concatenated (text between child elements included). */
  readonly text: string;
}

/** What the writer takes: a leaf with text, or a container of elements (empty renders `<Name />`). */
export interface XmlNode {
  readonly name: string;
  readonly content: string | readonly XmlNode[];
}

const declaration = '<?xml version="1.0" encoding="utf-8"?>';

/** A whole document: the declaration, then `root`. */
export function writeXmlDocument(root: XmlNode): string {
  return declaration + writeXmlNode(root);
}

export function writeXmlNode(node: XmlNode): string {
  if (typeof node.content === 'string') return `<${node.name}>${escapeXmlText(node.content)}</${node.name}>`;
  if (node.content.length === 0) return `<${node.name} />`;
  return `<${node.name}>${node.content.map(writeXmlNode).join('')}</${node.name}>`;
}

/**
 * What a writer must not emit as it stands: the five special characters, and every character XML 1.0
 * cannot carry in any form, not even as a character reference (https://www.w3.org/TR/xml/#charsets):
 * C0 controls but tab, line feed and carriage return; U+FFFE and U+FFFF; lone surrogates.
 */
const unwritable = /[<>&'"]|[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/**
 * Text for element content or a quoted attribute value: the five special characters as entities, and
 * each character XML cannot carry as U+FFFD, so a body that repeats request text (an error message, a
 * listing's echoed prefix) always parses. Chosen (unverified against the service): U+FFFD rather than
 * dropping, so an echo shows that and where something was left out and never reads as a different
 * value. A carriage return stays: XML carries it, though readers turn it into a line feed, and the JS
 * SDK's reader would show `&#xD;` as it stands. Data that must come back exactly (blob names) is
 * written in a form of its own before reaching here (wire/list-blobs-xml.ts).
 */
export function escapeXmlText(text: string): string {
  return text.replace(unwritable, (c) => entityOf[c] ?? '\uFFFD');
}

const entityOf: Readonly<Record<string, string>> = {
  '<': '&lt;',
  '>': '&gt;',
  '&': '&amp;',
  "'": '&apos;',
  '"': '&quot;',
};
const predefined: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', apos: "'", quot: '"' };

/** Parses a document with exactly one root element. Throws StorageError('InvalidXmlDocument'). */
export function parseXml(text: string): XmlElement {
  return new XmlReader(text).document();
}

/** The only child named `name`, or undefined; a repeated element is InvalidXmlDocument. */
export function childNamed(element: XmlElement, name: string): XmlElement | undefined {
  const found = element.children.filter((child) => child.name === name);
  if (found.length > 1) {
    throw new StorageError('InvalidXmlDocument', `The element ${name} appears more than once in ${element.name}.`);
  }
  return found[0];
}

/** The text of a leaf element; an element holding elements is InvalidXmlDocument. */
export function leafText(element: XmlElement): string {
  if (element.children.length > 0) {
    throw new StorageError('InvalidXmlDocument', `The element ${element.name} must hold text, not elements.`);
  }
  return element.text;
}

const nameStart = /[A-Za-z_:]/;
const nameChar = /[-A-Za-z0-9_.:]/;

class XmlReader {
  private at = 0;
  private elements = 0;

  constructor(private readonly text: string) {}

  document(): XmlElement {
    const control = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/.exec(this.text);
    if (control !== null) this.fail('The document contains a character XML does not allow.', control.index);
    if (this.text.startsWith('\uFEFF')) this.at = 1;
    if (this.text.startsWith('<?xml', this.at)) this.skipPast('?>');
    this.skipMisc();
    if (!this.text.startsWith('<', this.at) || this.text.startsWith('<!', this.at)) {
      const doctype = this.text.startsWith('<!DOCTYPE', this.at);
      this.fail(doctype ? 'A DOCTYPE is not allowed.' : 'Expected the root element.');
    }
    const root = this.element(1);
    this.skipMisc();
    if (this.at < this.text.length) this.fail('Content follows the root element.');
    return root;
  }

  /** Whitespace, comments and processing instructions between top-level items. */
  private skipMisc(): void {
    for (;;) {
      this.skipWhitespace();
      if (this.text.startsWith('<!--', this.at)) this.skipPast('-->');
      else if (this.text.startsWith('<?', this.at)) this.skipPast('?>');
      else return;
    }
  }

  private element(depth: number): XmlElement {
    if (depth > xmlDepthMax) this.fail(`Elements nest deeper than ${xmlDepthMax}.`);
    if (++this.elements > xmlElementsMax) this.fail(`The document has more than ${xmlElementsMax} elements.`);
    this.at++; // '<'
    const name = this.name();
    const attributes = this.attributes();
    if (this.text.startsWith('/>', this.at)) {
      this.at += 2;
      return { name, attributes, children: [], text: '' };
    }
    this.expect('>');
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      if (this.at >= this.text.length) this.fail(`The element ${name} is not closed.`);
      if (this.text.startsWith('</', this.at)) break;
      if (this.text.startsWith('<!--', this.at)) this.skipPast('-->');
      else if (this.text.startsWith('<![CDATA[', this.at)) text += this.cdata();
      else if (this.text.startsWith('<?', this.at)) this.skipPast('?>');
      else if (this.text.startsWith('<!', this.at)) this.fail('A declaration is not allowed inside an element.');
      else if (this.text.startsWith('<', this.at)) children.push(this.element(depth + 1));
      else text += this.characterData();
    }
    this.at += 2;
    if (this.name() !== name) this.fail(`The element ${name} is closed by a different end tag.`);
    this.skipWhitespace();
    this.expect('>');
    return { name, attributes, children, text };
  }

  private attributes(): Map<string, string> {
    const attributes = new Map<string, string>();
    for (;;) {
      const spaced = this.skipWhitespace();
      const next = this.text[this.at];
      if (next === '>' || next === '/' || next === undefined) return attributes;
      if (!spaced) this.fail('Attributes must be separated by whitespace.');
      const name = this.name();
      this.skipWhitespace();
      this.expect('=');
      this.skipWhitespace();
      const quote = this.text[this.at];
      if (quote !== '"' && quote !== "'") this.fail(`The attribute ${name} has no quoted value.`);
      const end = this.text.indexOf(quote, this.at + 1);
      if (end < 0) this.fail(`The attribute ${name} is not closed.`);
      const raw = this.text.slice(this.at + 1, end);
      if (raw.includes('<')) this.fail(`The attribute ${name} contains '<'.`);
      if (attributes.has(name)) this.fail(`The attribute ${name} appears twice.`);
      attributes.set(name, this.decodeReferences(raw, this.at + 1));
      this.at = end + 1;
    }
  }

  private name(): string {
    const start = this.at;
    if (!nameStart.test(this.text[this.at] ?? '')) this.fail('Expected a name.');
    while (nameChar.test(this.text[this.at] ?? '')) this.at++;
    return this.text.slice(start, this.at);
  }

  private characterData(): string {
    const end = this.text.indexOf('<', this.at);
    const stop = end < 0 ? this.text.length : end;
    const raw = this.text.slice(this.at, stop);
    if (raw.includes(']]>')) this.fail("Character data must not contain ']]>'.");
    const decoded = this.decodeReferences(raw, this.at);
    this.at = stop;
    return decoded;
  }

  private cdata(): string {
    const start = this.at + '<![CDATA['.length;
    const end = this.text.indexOf(']]>', start);
    if (end < 0) this.fail('A CDATA section is not closed.');
    this.at = end + 3;
    return this.text.slice(start, end);
  }

  /** Replaces entity and character references; `offset` is where `raw` starts, for errors. */
  private decodeReferences(raw: string, offset: number): string {
    if (!raw.includes('&')) return raw;
    return raw.replace(/&([^;&]*);?/g, (match, body: string, index: number) => {
      if (!match.endsWith(';')) this.fail('An & does not start a reference.', offset + index);
      const entity = predefined[body];
      if (entity !== undefined && Object.hasOwn(predefined, body)) return entity;
      const code = /^#[0-9]{1,7}$/.test(body)
        ? Number(body.slice(1))
        : /^#x[0-9A-Fa-f]{1,6}$/.test(body)
          ? Number.parseInt(body.slice(2), 16)
          : undefined;
      if (code === undefined || !isXmlChar(code)) this.fail(`The reference &${body}; is not allowed.`, offset + index);
      return String.fromCodePoint(code);
    });
  }

  /** Returns whether any whitespace was skipped. */
  private skipWhitespace(): boolean {
    const start = this.at;
    while (/[ \t\r\n]/.test(this.text[this.at] ?? '')) this.at++;
    return this.at > start;
  }

  private skipPast(terminator: string): void {
    const end = this.text.indexOf(terminator, this.at + 2);
    if (end < 0) this.fail(`Expected '${terminator}'.`);
    this.at = end + terminator.length;
  }

  private expect(char: string): void {
    if (this.text[this.at] !== char) this.fail(`Expected '${char}'.`);
    this.at++;
  }

  private fail(reason: string, offset = this.at): never {
    const message = `The specified XML is not syntactically valid: ${reason} (at offset ${offset})`;
    throw new StorageError('InvalidXmlDocument', message);
  }
}

/** XML 1.0 Char production: tab, newline, carriage return and U+0020 upward, without surrogates. */
function isXmlChar(code: number): boolean {
  return (
    code === 0x9 ||
    code === 0xa ||
    code === 0xd ||
    (code >= 0x20 && code <= 0xd7ff) ||
    (code >= 0xe000 && code <= 0xfffd) ||
    (code >= 0x10000 && code <= 0x10ffff)
  );
}
