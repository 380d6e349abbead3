// The account's CORS rules (Get/Set Table Service Properties). The rest of the service properties
// (logging, metrics) are sent back exactly as they were read.
import { appendXml, childText, getServiceProperties, setServiceProperties, type Credentials } from './api.js';
import { h, replace } from './dom.js';
import { attempt, status, succeeded } from './session.js';

const rulesMax = 5;
const fields = [
  { tag: 'AllowedOrigins', label: 'allowed origins', placeholder: 'https://example.com or *' },
  { tag: 'AllowedMethods', label: 'allowed methods', placeholder: 'GET,PUT,POST,MERGE,DELETE,OPTIONS' },
  { tag: 'AllowedHeaders', label: 'allowed headers', placeholder: 'x-ms-*' },
  { tag: 'ExposedHeaders', label: 'exposed headers', placeholder: 'x-ms-*' },
  { tag: 'MaxAgeInSeconds', label: 'max age (s)', placeholder: '3600' },
] as const;

export function showCors(root: HTMLElement, credentials: Credentials): void {
  const list = h('div', { id: 'cors-list' });
  let properties: XMLDocument | undefined;
  replace(
    root,
    h('h2', {}, `CORS rules of ${credentials.account}`),
    h(
      'section',
      { class: 'card' },
      h(
        'p',
        { class: 'hint' },
        'Browsers on other origins may call this account only as these rules allow (lists are comma-separated). This page itself is same-origin and needs none.',
      ),
      list,
      h(
        'div',
        { class: 'row wrap' },
        h('button', { type: 'button', id: 'cors-add', onclick: () => addRow(undefined) }, '+ rule'),
        h(
          'button',
          { type: 'button', id: 'cors-save', class: 'primary', onclick: () => void save() },
          'Save CORS rules',
        ),
      ),
    ),
  );

  const addRow = (rule: Element | undefined): void => addRuleRow(list, rule);

  async function load(): Promise<void> {
    properties = await attempt(() => getServiceProperties(credentials));
    if (properties === undefined) return;
    replace(list);
    for (const rule of properties.getElementsByTagName('CorsRule')) addRow(rule);
  }

  async function save(): Promise<void> {
    if (properties === undefined) return;
    const root = properties.documentElement;
    for (const old of [...root.getElementsByTagName('Cors')]) old.remove();
    const cors = appendXml(root, 'Cors');
    for (const row of list.querySelectorAll('.cors-rule')) {
      const rule = appendXml(cors, 'CorsRule');
      for (const { tag } of fields) {
        const value = (row.querySelector(`.cors-${tag}`) as HTMLInputElement).value.replace(/\s+/g, '');
        appendXml(rule, tag, tag === 'MaxAgeInSeconds' && value === '' ? '0' : value);
      }
    }
    const done = await succeeded(() => setServiceProperties(credentials, properties!));
    if (!done) return;
    status('CORS rules saved.');
    await load();
  }

  void load();
}

/** One editable rule, at the end of the list; refused past the service's limit. */
function addRuleRow(list: HTMLElement, rule: Element | undefined): void {
  if (list.querySelectorAll('.cors-rule').length >= rulesMax) {
    status(`An account has at most ${rulesMax} CORS rules.`, 'error');
    return;
  }
  const inputs = fields.map(({ tag, label, placeholder }) =>
    h('input', {
      class: `cors-${tag}`,
      'aria-label': label,
      placeholder,
      spellcheck: 'false',
      value: rule === undefined ? '' : childText(rule, tag),
    }),
  );
  const row = h(
    'div',
    { class: 'cors-rule row wrap' },
    inputs,
    h(
      'button',
      { type: 'button', class: 'icon danger', 'aria-label': 'delete rule', onclick: () => row.remove() },
      '×',
    ),
  );
  list.appendChild(row);
}
