// Looks for secrets (canaries) in captured text, in every form a leak commonly takes: raw,
// URL- or form-encoded, JSON- or HTML-escaped, hex, and base64/base64url at any byte alignment.

/** A piece of captured output and where it came from (a response, a log line, an event, …). */
export interface Captured {
  source: string;
  text: string;
}

/** A secret to look for. */
export interface Canary {
  label: string;
  value: string;
  /** True for a value response headers carry by design (a session id in its cookie). */
  allowedInHeaders?: boolean;
}

/** Where a canary was found, and in which form. */
export interface Leak {
  source: string;
  canary: string;
  form: string;
}

/** The entity of each character HTML escaping changes, as the package's error page writes it. */
const ENTITIES = new Map(
  [...`&<>"'`].map((c, i) => [c, `&${['amp', 'lt', 'gt', 'quot', '#39'][i]};`]),
);

/**
 * The characters of a base64 text that depend on `bytes` alone, for each of the three positions
 * the bytes can take inside a longer encoded value (the first and last groups mix with neighbours).
 */
function base64Forms(bytes: Buffer, encoding: 'base64' | 'base64url'): string[] {
  return [0, 1, 2].map((shift) => {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString(encoding);
    const end = Math.floor((shift + bytes.length) / 3) * 4;
    return encoded.slice(shift === 0 ? 0 : 4, end);
  });
}

/** Every form of `value` the scan looks for, by name. */
export function leakForms(value: string): [string, string][] {
  const bytes = Buffer.from(value, 'utf8');
  const urlEncoded = encodeURIComponent(value);
  const jsonEscaped = JSON.stringify(value).slice(1, -1);
  const forms: [string, string][] = [
    ['raw', value],
    ['URL-encoded', urlEncoded],
    ['URL-encoded (lower case)', urlEncoded.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
    ['form-encoded', new URLSearchParams({ v: value }).toString().slice(2)],
    ['JSON-escaped', jsonEscaped],
    ['JSON-escaped twice', JSON.stringify(jsonEscaped).slice(1, -1)],
    ['HTML-escaped', value.replace(/[&<>"']/g, (c) => ENTITIES.get(c)!)],
    ['HTML-escaped (numeric)', value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)],
    ['hex', bytes.toString('hex')],
    ...base64Forms(bytes, 'base64').map((form): [string, string] => ['base64', form]),
    ...base64Forms(bytes, 'base64url').map((form): [string, string] => ['base64url', form]),
  ];
  // One entry per distinct text, under its first name (most forms of a plain value are the raw value).
  const byText = new Map<string, string>();
  for (const [name, form] of forms) if (!byText.has(form)) byText.set(form, name);
  return [...byText].map(([form, name]) => [name, form]);
}

/**
 * Every canary form found in `captured`. Sources named `… headers` are response headers, where
 * canaries `allowedInHeaders` are not looked for.
 */
export function findLeaks(captured: readonly Captured[], canaries: readonly Canary[]): Leak[] {
  const searched = canaries.map((canary) => ({ canary, forms: leakForms(canary.value) }));
  const leaks: Leak[] = [];
  for (const { source, text } of captured) {
    const isHeader = source.endsWith(' headers');
    for (const { canary, forms } of searched) {
      if (isHeader && canary.allowedInHeaders === true) continue;
      const hit = forms.find(([, form]) => text.includes(form));
      if (hit) leaks.push({ source, canary: canary.label, form: hit[0] });
    }
  }
  return leaks;
}
