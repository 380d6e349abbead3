// The one way the explorer builds the page: elements with attributes and children given as nodes
// or plain strings, which become text nodes. Nothing here parses markup, so a key, property name
// or value from the store is always text, whatever characters it holds.

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name.startsWith('on')) throw new Error(`handler ${name} must be a function`);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces every child of `parent`. */
export function replace(parent: Node, ...children: (Child | Child[])[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (element === null) throw new Error(`no element #${id}`);
  return element as T;
}

/** A labelled form field; the label's `for` ties it to the control for screen readers and clicks. */
export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  if (control.id === '') control.id = `f${++fieldCount}`;
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hint && h('small', {}, hint));
}
let fieldCount = 0;

/** Offers a Blob as a file download, without leaving the page. */
export function download(fileName: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const link = h('a', { href: url, download: fileName });
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
