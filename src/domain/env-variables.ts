/** `${VAR}` in a configured value, replaced by the variable's value from an environment. */

export type ExpandResult = { ok: true; text: string } | { ok: false; missing: string[] };

/** Every `${NAME}` replaced by `encode(value)`; the names that are not set make it fail. */
export function expandVariables(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  encode: (value: string) => string = (v) => v,
): ExpandResult {
  const missing: string[] = [];
  const expanded = text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const value = env[name];
    if (value === undefined) {
      missing.push(name);
      return '';
    }
    return encode(value);
  });
  return missing.length > 0 ? { ok: false, missing } : { ok: true, text: expanded };
}

/** The message for variables that are not set: `${A}, ${B} not set in the environment`. */
export function missingVariablesText(missing: readonly string[]): string {
  return `\${${missing.join('}, ${')}} not set in the environment`;
}
