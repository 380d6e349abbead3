// A list of named resources in the left pane (queues, containers): a prefix filter, pages by the
// service's NextMarker (*More*), a create form checking the name first, and delete after asking.
import type { Credentials } from './api.js';
import { byId, h, replace } from './dom.js';
import { attempt, status, succeeded } from './session.js';

export interface NamePage {
  readonly names: string[];
  readonly nextMarker: string | undefined;
}

export interface NameListOptions {
  /**
   * 'queue' or 'container': names the elements (`{kind}-list`, `{kind}-filter`, `{kind}-more`,
   * `new-{kind}`, `create-{kind}-form`), the list buttons' data attribute, and the words.
   */
  readonly kind: string;
  readonly pageSize: number;
  /** What deleting one also deletes, for the confirmation: "every message in it". */
  readonly contents: string;
  credentials(): Credentials | undefined;
  page(credentials: Credentials, prefix: string, marker: string | undefined, pageSize: number): Promise<NamePage>;
  create(credentials: Credentials, name: string): Promise<void>;
  remove(credentials: Credentials, name: string): Promise<void>;
  open(credentials: Credentials, name: string): void;
  /** Which naming rule the name breaks, in words; undefined when it is fine. */
  nameReason(name: string): string | undefined;
}

export class NameList {
  private generation = 0;
  private nextMarker: string | undefined;
  private current: string | undefined;

  constructor(private readonly options: NameListOptions) {
    const { kind } = options;
    byId(`${kind}-filter`).addEventListener('input', () => void this.refresh());
    byId(`${kind}-more`).addEventListener('click', () => void this.load(this.generation, true));
    byId(`create-${kind}-form`).addEventListener('submit', (event) => {
      event.preventDefault();
      void this.createNamed();
    });
  }

  /** Lists from the first page (after connecting, or when the prefix changes). */
  async refresh(): Promise<void> {
    if (this.options.credentials() === undefined) return;
    this.nextMarker = undefined;
    await this.load(++this.generation, false);
  }

  /** Forgets the names of the account used before (a failed connect). */
  clear(): void {
    this.generation++;
    this.current = undefined;
    replace(byId(`${this.options.kind}-list`));
    byId(`${this.options.kind}-more`).hidden = true;
  }

  /** Marks `name` as the one open (undefined: none). */
  mark(name: string | undefined): void {
    this.current = name;
    for (const button of document.querySelectorAll<HTMLButtonElement>(`#${this.options.kind}-list .table-link`)) {
      button.setAttribute('aria-current', String(button.dataset[this.options.kind] === name));
    }
  }

  private async load(generation: number, more: boolean): Promise<void> {
    const { kind, pageSize } = this.options;
    const using = this.options.credentials();
    if (using === undefined) return;
    const prefix = byId<HTMLInputElement>(`${kind}-filter`).value;
    const page = await attempt(() => this.options.page(using, prefix, more ? this.nextMarker : undefined, pageSize));
    if (generation !== this.generation || page === undefined) return;
    this.nextMarker = page.nextMarker;
    byId(`${kind}-more`).hidden = this.nextMarker === undefined;
    const items = page.names.map((name) => this.item(using, name));
    if (more) byId(`${kind}-list`).append(...items);
    else replace(byId(`${kind}-list`), items);
    this.mark(this.current);
  }

  private item(using: Credentials, name: string): HTMLElement {
    const { kind } = this.options;
    const open = (): void => {
      this.mark(name);
      this.options.open(using, name);
    };
    return h(
      'li',
      {},
      h('button', { type: 'button', class: 'table-link', [`data-${kind}`]: name, onclick: open }, name),
      h(
        'button',
        {
          type: 'button',
          class: 'icon danger',
          title: `Delete ${kind} ${name}`,
          'aria-label': `Delete ${kind} ${name}`,
          onclick: () => void this.removeNamed(using, name),
        },
        '×',
      ),
    );
  }

  private async createNamed(): Promise<void> {
    const { kind } = this.options;
    const using = this.options.credentials();
    const input = byId<HTMLInputElement>(`new-${kind}`);
    const name = input.value.trim();
    if (using === undefined || name === '') return;
    const reason = this.options.nameReason(name);
    if (reason !== undefined) {
      status(`${capitalized(kind)} name '${name}': ${reason}.`, 'error');
      input.setAttribute('aria-invalid', 'true');
      return;
    }
    input.removeAttribute('aria-invalid');
    if (!(await succeeded(() => this.options.create(using, name)))) return;
    input.value = '';
    status(`${capitalized(kind)} ${name} created.`);
    this.current = name;
    await this.refresh();
    this.options.open(using, name);
  }

  private async removeNamed(using: Credentials, name: string): Promise<void> {
    const { kind, contents } = this.options;
    if (!confirm(`Delete ${kind} ${name} and ${contents}? This cannot be undone.`)) return;
    if (!(await succeeded(() => this.options.remove(using, name)))) return;
    status(`${capitalized(kind)} ${name} deleted.`);
    if (this.current === name) {
      this.current = undefined;
      replace(byId('main'), h('p', { class: 'hint' }, `Pick a ${kind}.`));
    }
    await this.refresh();
  }
}

function capitalized(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/**
 * Which rule of queue and container names `name` breaks (naming-queues-and-metadata,
 * naming-and-referencing-containers--blobs--and-metadata): 3 to 63 lower-case letters, digits and
 * single dashes, starting and ending with a letter or digit.
 */
export function lowerCaseNameReason(name: string): string | undefined {
  const bad = [...name].find((c) => !/[a-z0-9-]/.test(c));
  if (bad !== undefined) return `only lower-case letters, digits and dashes may appear, not ${JSON.stringify(bad)}`;
  if (name.length < 3) return `at least 3 characters (this has ${name.length})`;
  if (name.length > 63) return `at most 63 characters (this has ${name.length})`;
  if (name.startsWith('-') || name.endsWith('-')) return 'it must start and end with a letter or digit';
  if (name.includes('--')) return 'two dashes may not follow each other';
  return undefined;
}
