// Table ACLs: the stored access policies of Get/Set Table ACL (operations.md §3) and the lookup a
// service SAS with `si` makes on every request, so that changing or removing a policy takes effect
// at once (auth.md §7.3).
import { TableError } from '../errors.js';
import { storedPoliciesMax, storedPolicyIdLengthMax } from '../limits.js';
import { childNamed, leafText, parseXml, writeXmlDocument, type XmlElement, type XmlNode } from '../protocol/xml.js';
import type { Store } from '../storage/store.js';

/** One stored access policy; absent fields are left to the SAS (auth.md §7.3). */
export interface SignedIdentifier {
  readonly id: string;
  readonly start?: string;
  readonly expiry?: string;
  readonly permission?: string;
}

export class AclService {
  constructor(private readonly store: Store) {}

  /** The table's policies in the order they were set; 404 TableNotFound without the table. */
  async get(account: string, table: string): Promise<SignedIdentifier[]> {
    await this.requireTable(account, table);
    return (await this.stored(account, table)) ?? [];
  }

  /** Replaces the whole set (operations.md §3.2). */
  async set(account: string, table: string, identifiers: readonly SignedIdentifier[]): Promise<void> {
    const document = identifiers.length === 0 ? undefined : JSON.stringify(identifiers);
    // The store writes it only while the table exists, so a table deleted meanwhile keeps nothing.
    if ((await this.store.putSetting(account, { scope: 'table', table }, document)) === 'tableNotFound') {
      throw new TableError('TableNotFound');
    }
  }

  /** The policy `id` of the table, or undefined (also when the table is gone). */
  async findPolicy(account: string, table: string, id: string): Promise<SignedIdentifier | undefined> {
    return (await this.stored(account, table))?.find((identifier) => identifier.id === id);
  }

  private async stored(account: string, table: string): Promise<SignedIdentifier[] | undefined> {
    const document = await this.store.getSetting(account, { scope: 'table', table });
    return document === undefined ? undefined : (JSON.parse(document) as SignedIdentifier[]);
  }

  private async requireTable(account: string, table: string): Promise<void> {
    if ((await this.store.getTable(account, table)) === undefined) throw new TableError('TableNotFound');
  }
}

/**
 * Reads a Set Table ACL body. An empty body clears the policies (unverified). Unknown elements are
 * ignored, like unknown headers (conformance-notes §48; unverified for XML). More than 5
 * identifiers is InvalidXmlDocument (the code is unverified), as is a repeated Id (unverified).
 */
export function parseSignedIdentifiers(text: string): SignedIdentifier[] {
  if (text.trim() === '') return [];
  const root = parseXml(text);
  if (root.name !== 'SignedIdentifiers') {
    throw new TableError('InvalidXmlDocument', `The root element must be SignedIdentifiers, not ${root.name}.`);
  }
  const identifiers = root.children.filter((child) => child.name === 'SignedIdentifier').map(signedIdentifier);
  if (identifiers.length > storedPoliciesMax) {
    throw new TableError('InvalidXmlDocument', `A table may have at most ${storedPoliciesMax} stored access policies.`);
  }
  const ids = new Set(identifiers.map((identifier) => identifier.id));
  if (ids.size < identifiers.length) {
    throw new TableError('InvalidXmlDocument', 'A signed identifier Id appears twice.');
  }
  return identifiers;
}

/** The Get Table ACL body as the service writes it: a UTF-8 BOM, 7-digit times (operations.md §3.1). */
export function writeSignedIdentifiers(identifiers: readonly SignedIdentifier[]): string {
  const nodes = identifiers.map((identifier): XmlNode => {
    const policy: XmlNode[] = [];
    if (identifier.start !== undefined) policy.push({ name: 'Start', content: identifier.start });
    if (identifier.expiry !== undefined) policy.push({ name: 'Expiry', content: identifier.expiry });
    if (identifier.permission !== undefined) policy.push({ name: 'Permission', content: identifier.permission });
    const content: XmlNode[] = [{ name: 'Id', content: identifier.id }];
    if (policy.length > 0) content.push({ name: 'AccessPolicy', content: policy });
    return { name: 'SignedIdentifier', content };
  });
  return `\uFEFF${writeXmlDocument({ name: 'SignedIdentifiers', content: nodes })}`;
}

function signedIdentifier(element: XmlElement): SignedIdentifier {
  const idElement = childNamed(element, 'Id');
  if (idElement === undefined) throw new TableError('MissingRequiredXmlNode', 'A SignedIdentifier has no Id.');
  const id = leafText(idElement);
  if (id.length === 0 || id.length > storedPolicyIdLengthMax) {
    const reason = `A signed identifier Id must have 1 to ${storedPolicyIdLengthMax} characters.`;
    throw new TableError('InvalidXmlNodeValue', reason);
  }
  const policy = childNamed(element, 'AccessPolicy');
  if (policy === undefined) return { id };
  const start = optionalLeaf(policy, 'Start');
  const expiry = optionalLeaf(policy, 'Expiry');
  const permission = optionalLeaf(policy, 'Permission');
  return {
    id,
    ...(start !== undefined && { start: normalizePolicyTime('Start', start) }),
    ...(expiry !== undefined && { expiry: normalizePolicyTime('Expiry', expiry) }),
    ...(permission !== undefined && { permission: checkedPermission(permission) }),
  };
}

/** A present, non-empty leaf's text; an empty element counts as absent (operations.md §3.2). */
function optionalLeaf(parent: XmlElement, name: string): string | undefined {
  const element = childNamed(parent, name);
  const text = element === undefined ? '' : leafText(element).trim();
  return text === '' ? undefined : text;
}

/** Table permission letters r a u d, each at most once (auth.md §7.1). */
function checkedPermission(text: string): string {
  if (!/^[raud]+$/.test(text) || new Set(text).size !== text.length) {
    throw new TableError('InvalidXmlNodeValue', `The permission '${text}' must be made of the letters r, a, u, d.`);
  }
  return text;
}

// YYYY-MM-DD, optionally Thh:mm, :ss, .fffffff (1-7 digits), then Z or ±hh:mm (operations.md §3.2).
// A time without a zone is read as UTC (lenient; unverified).
const policyTimePattern =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** The time in UTC with seven fractional digits, as Get Table ACL returns it. */
export function normalizePolicyTime(element: string, text: string): string {
  const match = policyTimePattern.exec(text);
  const invalid = () =>
    new TableError('InvalidXmlNodeValue', `The ${element} time '${text}' is not a valid ISO 8601 time.`);
  if (match === null) throw invalid();
  const [year, month, day, hour = 0, minute = 0, second = 0] = match.slice(1, 7).map((part) => Number(part ?? 0));
  const fraction = (match[7] ?? '').padEnd(7, '0');
  const zone = match[8] ?? 'Z';
  const local = Date.UTC(year!, month! - 1, day!, hour, minute, second);
  const check = new Date(local);
  const fieldsValid =
    check.getUTCFullYear() === year && check.getUTCMonth() === month! - 1 && check.getUTCDate() === day &&
    check.getUTCHours() === hour && check.getUTCMinutes() === minute && check.getUTCSeconds() === second;
  if (!fieldsValid) throw invalid();
  const zoneSign = zone[0] === '-' ? -1 : 1;
  const offsetMinutes = zone === 'Z' ? 0 : zoneSign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const utc = new Date(local - offsetMinutes * 60_000);
  if (utc.getUTCFullYear() > 9999) throw invalid();
  return `${utc.toISOString().slice(0, 19)}.${fraction}Z`;
}
