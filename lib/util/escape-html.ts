// Escapes text for HTML text and attribute values: every page the package or its simulator writes
// goes through this one function.

/** `value` with `& < > " '` replaced by numeric character references. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
