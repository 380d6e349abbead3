// Header values as node:http hands them over: absent, one string, or an array for a repeated header.

/** All values of a header joined as one list (RFC 9110 §5.3); '' when absent. */
export function headerText(value: string | readonly string[] | undefined): string {
  return typeof value === 'string' ? value : (value?.join(',') ?? '');
}

/** The header's value, or its first value when repeated; undefined when absent. */
export function firstHeader(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === 'string' ? value : value?.[0];
}
