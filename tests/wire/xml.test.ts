import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { StorageError } from '../../src/errors.js';
import { xmlDepthMax, xmlElementsMax } from '../../src/limits.js';
import {
  childNamed,
  escapeXmlText,
  leafText,
  parseXml,
  writeXmlDocument,
  writeXmlNode,
  type XmlElement,
} from '../../src/wire/xml.js';
import { seededRandom } from '../query/random.js';
import { scaled } from '../helpers/scale.js';

function invalid(text: string, reason?: RegExp): void {
  assert.throws(
    () => parseXml(text),
    (error: unknown) => {
      assert.ok(error instanceof StorageError, String(error));
      assert.equal(error.code, 'InvalidXmlDocument');
      if (reason !== undefined) assert.match(error.message, reason);
      return true;
    },
    text.slice(0, 80),
  );
}

/** The tree as nested arrays, for compact comparisons: [name, text or children]. */
function shape(element: XmlElement): unknown {
  return element.children.length === 0 ? [element.name, element.text] : [element.name, element.children.map(shape)];
}

describe('parseXml: what the SDKs send (docs/protocol-notes.md#xml-bodies)', () => {
  const body = '<SignedIdentifiers><SignedIdentifier><Id>p1</Id></SignedIdentifier></SignedIdentifiers>';
  const expected = ['SignedIdentifiers', [['SignedIdentifier', [['Id', 'p1']]]]];

  test('JS: UTF-8 standalone declaration', () => {
    assert.deepEqual(shape(parseXml(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>${body}`)), expected);
  });

  test('Python: single-quoted declaration and a newline', () => {
    assert.deepEqual(shape(parseXml(`<?xml version='1.0' encoding='utf-8'?>\n${body}`)), expected);
  });

  test('a BOM, no declaration, indentation, comments and a trailing newline', () => {
    const text = `\uFEFF<!-- c --><SignedIdentifiers>\n  <!-- inner -->\n  <SignedIdentifier>\n    <Id>p1</Id>\n  </SignedIdentifier>\n</SignedIdentifiers>\n`;
    assert.deepEqual(shape(parseXml(text)), expected);
  });
});

describe('parseXml: content', () => {
  test('predefined entities, character references and CDATA', () => {
    const root = parseXml('<a>&lt;&gt;&amp;&apos;&quot; &#65;&#x42;&#x1F600; <![CDATA[<raw & text>]]></a>');
    assert.equal(root.text, `<>&'" AB\u{1F600} <raw & text>`);
  });

  test('attributes in either quote, decoded; self-closing elements', () => {
    const root = parseXml(`<a x="1 &amp; 2" y='z'><b/><c /></a>`);
    assert.deepEqual(
      [...root.attributes],
      [
        ['x', '1 & 2'],
        ['y', 'z'],
      ],
    );
    assert.deepEqual(shape(root), [
      'a',
      [
        ['b', ''],
        ['c', ''],
      ],
    ]);
  });

  test('namespaced names and processing instructions inside elements', () => {
    const root = parseXml('<ns:a xmlns:ns="urn:x"><?pi data?><ns:b>t</ns:b></ns:a>');
    assert.equal(root.name, 'ns:a');
    assert.equal(root.children[0]!.name, 'ns:b');
  });

  test('childNamed finds one child, refuses a repeated one; leafText refuses a container', () => {
    const root = parseXml('<a><b>1</b><c>2</c><c>3</c><d><e/></d></a>');
    assert.equal(leafText(childNamed(root, 'b')!), '1');
    assert.equal(childNamed(root, 'z'), undefined);
    assert.throws(
      () => childNamed(root, 'c'),
      (error: unknown) => (error as StorageError).code === 'InvalidXmlDocument',
    );
    assert.throws(
      () => leafText(childNamed(root, 'd')!),
      (error: unknown) => (error as StorageError).code === 'InvalidXmlDocument',
    );
  });
});

describe('parseXml: refusals are InvalidXmlDocument with an offset', () => {
  const cases: [string, string, RegExp?][] = [
    ['empty', ''],
    ['whitespace only', '  \n'],
    ['text only', 'hello'],
    ['unclosed root', '<a><b></b>', /not closed/],
    ['mismatched end tag', '<a></b>', /different end tag/],
    ['two roots', '<a/><b/>', /follows the root/],
    ['text after the root', '<a/>x', /follows the root/],
    ['DOCTYPE (no entity expansion)', '<!DOCTYPE a [<!ENTITY x "y">]><a>&x;</a>', /DOCTYPE/],
    ['declaration inside an element', '<a><!ENTITY x "y"></a>', /declaration/],
    ['unknown entity', '<a>&x;</a>', /&x;/],
    ['bare ampersand', '<a>a & b</a>', /reference/],
    ['reference to U+0000', '<a>&#0;</a>', /not allowed/],
    ['reference to a surrogate', '<a>&#xD800;</a>', /not allowed/],
    ['raw control character', '<a>\u0001</a>', /does not allow/],
    [']]> in text', '<a>]]></a>', /]]>/],
    ['unclosed CDATA', '<a><![CDATA[x</a>', /CDATA/],
    ['unclosed comment', '<a><!-- x</a>', /'-->'/],
    ['duplicate attribute', '<a x="1" x="2"/>', /twice/],
    ['unquoted attribute', '<a x=1/>', /quoted/],
    ['< in an attribute', '<a x="<"/>', /'<'/],
    ['attributes without whitespace', '<a x="1"y="2"/>', /whitespace/],
    ['a name starting with a digit', '<1a/>', /name/],
    ['a lone <', '<a><</a>', /name/],
  ];
  for (const [name, text, reason] of cases) test(name, () => invalid(text, reason));

  test('errors name the offset', () => invalid('<a></b>', /at offset \d+/));

  test(`nesting: ${xmlDepthMax} levels pass, one more fails`, () => {
    const nested = (depth: number) => '<a>'.repeat(depth) + '</a>'.repeat(depth);
    parseXml(nested(xmlDepthMax));
    invalid(nested(xmlDepthMax + 1), /deeper/);
  });

  test(`element count: ${xmlElementsMax} pass, one more fails`, () => {
    const many = (count: number) => `<r>${'<e/>'.repeat(count - 1)}</r>`;
    parseXml(many(xmlElementsMax));
    invalid(many(xmlElementsMax + 1), /more than/);
  });
});

describe('writer', () => {
  test('declaration, leaves, nested and empty containers', () => {
    const text = writeXmlDocument({
      name: 'R',
      content: [
        { name: 'A', content: 'x' },
        { name: 'E', content: '' },
        { name: 'C', content: [] },
      ],
    });
    assert.equal(text, '<?xml version="1.0" encoding="utf-8"?><R><A>x</A><E></E><C /></R>');
  });

  test('escapes the five special characters', () => {
    assert.equal(escapeXmlText(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;');
  });

  test('writes each character XML cannot carry as U+FFFD, keeps tab, line breaks and astral characters', () => {
    const text = 'a\u0000\u0001\u001F\uFFFE\uFFFF\uD800b\uDFFF\t\n\r\u{1F600}\uFFFD';
    const written = escapeXmlText(text);
    assert.equal(written, 'a\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD\uFFFDb\uFFFD\t\n\r\u{1F600}\uFFFD');
    assert.equal(parseXml(writeXmlNode({ name: 'v', content: text })).text, written);
  });

  test('round trip: any XML-legal text written as a leaf reads back unchanged', () => {
    const random = seededRandom(7);
    const alphabet = [
      'a',
      'Z',
      ' ',
      '<',
      '>',
      '&',
      "'",
      '"',
      ';',
      '#',
      ']]>',
      '\n',
      '\t',
      'é',
      '\u{1F600}',
      '&amp;',
      'CDATA',
    ];
    for (let i = 0; i < scaled(500); i++) {
      const text = Array.from({ length: random.int(12) }, () => alphabet[random.int(alphabet.length)]).join('');
      const parsed = parseXml(writeXmlNode({ name: 'v', content: text }));
      assert.equal(parsed.text, text);
    }
  });
});

describe('fuzz: mutated documents are parsed or refused with InvalidXmlDocument, never a crash', () => {
  const seed =
    '<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Logging><Version>1.0</Version>' +
    '<Delete>false</Delete></Logging><Cors><CorsRule><AllowedOrigins>http://a.com</AllowedOrigins>' +
    '<![CDATA[x]]><!-- c --></CorsRule></Cors><e a="&amp;"/></StorageServiceProperties>';
  test(`${scaled(5000)} mutations`, () => {
    const random = seededRandom(11);
    const pieces = [
      '<',
      '>',
      '/',
      '&',
      ';',
      '"',
      "'",
      '<!--',
      '-->',
      '<![CDATA[',
      ']]>',
      '<?',
      '?>',
      '=',
      ' ',
      '&#',
      'x',
      '\u0000',
      '<!DOCTYPE',
    ];
    for (let i = 0; i < scaled(5000); i++) {
      let text = seed;
      for (let edits = 1 + random.int(4); edits > 0; edits--) {
        const at = random.int(text.length + 1);
        const cut = random.int(3);
        text =
          text.slice(0, at) + (random.int(2) === 0 ? pieces[random.int(pieces.length)] : '') + text.slice(at + cut);
      }
      try {
        parseXml(text);
      } catch (error) {
        assert.ok(
          error instanceof StorageError && error.code === 'InvalidXmlDocument',
          `${String(error)} for ${JSON.stringify(text)}`,
        );
      }
    }
  });
});
