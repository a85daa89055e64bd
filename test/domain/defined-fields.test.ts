/** definedFields: the optional fields of an object, without the keys whose value is undefined. */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { definedFields } from '../../src/domain/defined-fields.js';

describe('definedFields', () => {
  it('leaves out the keys whose value is undefined: absent, not undefined', () => {
    const fields = definedFields({ session: undefined, model: 'opus', sessionError: undefined });
    expect(Object.keys(fields)).toEqual(['model']);
    expect('session' in fields).toBe(false);
    expect('sessionError' in fields).toBe(false);
    expect(JSON.stringify(fields)).toBe('{"model":"opus"}');
  });

  it('keeps null, false, 0 and the empty string', () => {
    const fields = definedFields({ a: null, b: false, c: 0, d: '' });
    expect(fields).toStrictEqual({ a: null, b: false, c: 0, d: '' });
  });

  it('keeps the order of the keys given', () => {
    const fields = definedFields({ z: 1, skipped: undefined, a: 2, m: 3 });
    expect(Object.keys(fields)).toEqual(['z', 'a', 'm']);
    expect(JSON.stringify({ first: 0, ...fields, last: 4 })).toBe('{"first":0,"z":1,"a":2,"m":3,"last":4}');
  });

  it('gives an empty object when nothing is defined', () => {
    expect(definedFields({ a: undefined, b: undefined })).toStrictEqual({});
  });

  it('types each field as optional and without undefined', () => {
    const fieldsOf = (model: string | undefined, count: number | null | undefined) => definedFields({ model, count });
    expectTypeOf(fieldsOf('opus', null)).toEqualTypeOf<{ model?: string; count?: number | null }>();
  });
});
