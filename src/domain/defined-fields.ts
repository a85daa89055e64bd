/**
 * An object of optional fields: each key of `T`, present only with a defined value.
 * `NonNullable<T[K]> | (T[K] & null)` is `T[K]` without undefined, spelled as the compiler
 * narrows `value !== undefined`, so the helper needs no assertion.
 */
export type DefinedFields<T> = { [K in keyof T]?: NonNullable<T[K]> | (T[K] & null) };

/**
 * The fields whose value is not undefined, in the order given: what
 * `...(x !== undefined ? { x } : {})` said once per field. A key left out is absent, not
 * undefined, so `in`, `Object.keys` and serialized output never see it; null, false and 0 stay.
 */
export function definedFields<T extends object>(fields: T): DefinedFields<T> {
  const defined: DefinedFields<T> = {};
  for (const key in fields) {
    const value = fields[key];
    if (value !== undefined) defined[key] = value;
  }
  return defined;
}
