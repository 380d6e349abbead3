// The XML body of Get/Set Table ACL: stored access policies (Azure REST: get-table-acl). Pure: no I/O.
import { dateTimeTicksMax, formatDateTimeTicks, parseIsoTicks } from '../domain/edm.js';
import { StorageError } from '../errors.js';
import { storedPoliciesMax, storedPolicyIdLengthMax } from '../limits.js';
import type { SignedIdentifier } from '../domain/signed-identifier.js';
import { childNamed, leafText, parseXml, writeXmlDocument, type XmlElement, type XmlNode } from './xml.js';

export type { SignedIdentifier } from '../domain/signed-identifier.js';

/**
 * Reads a Set Table ACL body. An empty body clears the policies (unverified). Unknown elements are
 * ignored, like unknown headers (docs/protocol-notes.md#unknown-input-is-ignored; unverified for XML). More than 5
 * identifiers is InvalidXmlDocument (the code is unverified), as is a repeated Id (unverified).
 */
export function parseSignedIdentifiers(text: string, permissionLetters = 'raud'): SignedIdentifier[] {
  if (text.trim() === '') return [];
  const root = parseXml(text);
  if (root.name !== 'SignedIdentifiers') {
    throw new StorageError('InvalidXmlDocument', `The root element must be SignedIdentifiers, not ${root.name}.`);
  }
  const identifiers = root.children
    .filter((child) => child.name === 'SignedIdentifier')
    .map((child) => signedIdentifier(child, permissionLetters));
  if (identifiers.length > storedPoliciesMax) {
    throw new StorageError('InvalidXmlDocument', `At most ${storedPoliciesMax} stored access policies may be set.`);
  }
  const ids = new Set(identifiers.map((identifier) => identifier.id));
  if (ids.size < identifiers.length) {
    throw new StorageError('InvalidXmlDocument', 'A signed identifier Id appears twice.');
  }
  return identifiers;
}

/** The Get Table ACL body as the service writes it: a UTF-8 BOM, 7-digit times (Azure REST: get-table-acl). */
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

function signedIdentifier(element: XmlElement, permissionLetters: string): SignedIdentifier {
  const idElement = childNamed(element, 'Id');
  if (idElement === undefined) throw new StorageError('MissingRequiredXmlNode', 'A SignedIdentifier has no Id.');
  const id = leafText(idElement);
  if (id.length === 0 || id.length > storedPolicyIdLengthMax) {
    const reason = `A signed identifier Id must have 1 to ${storedPolicyIdLengthMax} characters.`;
    throw new StorageError('InvalidXmlNodeValue', reason);
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
    ...(permission !== undefined && { permission: checkedPermission(permission, permissionLetters) }),
  };
}

/** A present, non-empty leaf's text; an empty element counts as absent (Azure REST: set-table-acl). */
function optionalLeaf(parent: XmlElement, name: string): string | undefined {
  const element = childNamed(parent, name);
  const text = element === undefined ? '' : leafText(element).trim();
  return text === '' ? undefined : text;
}

/**
 * Permission letters of the service (table: r a u d, Azure REST: create-service-sas; queue: r a u p), each at most
 * once.
 */
function checkedPermission(text: string, letters: string): string {
  if (![...text].every((letter) => letters.includes(letter)) || new Set(text).size !== text.length) {
    const allowed = [...letters].join(', ');
    throw new StorageError('InvalidXmlNodeValue', `The permission '${text}' must be made of the letters ${allowed}.`);
  }
  return text;
}

// YYYY-MM-DD, optionally Thh:mm, :ss, .fffffff (1-7 digits), then Z or ±hh:mm (Azure REST: set-table-acl).
// A time without a zone is read as UTC (lenient; unverified).
/** The time in UTC with seven fractional digits, as Get Table ACL returns it. */
export function normalizePolicyTime(element: string, text: string): string {
  const ticks = parseIsoTicks(text, { dateOnly: true, fractionDigitsMax: 7 });
  if (ticks === undefined || ticks > dateTimeTicksMax) {
    throw new StorageError('InvalidXmlNodeValue', `The ${element} time '${text}' is not a valid ISO 8601 time.`);
  }
  const text7 = formatDateTimeTicks(ticks); // fraction without trailing zeros
  const [seconds, fraction = ''] = text7.slice(0, -1).split('.');
  return `${seconds}.${fraction.padEnd(7, '0')}Z`;
}
