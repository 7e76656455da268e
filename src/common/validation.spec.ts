import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsOptional, IsString, Length, ValidateNested } from 'class-validator';
import { ValidationFailedError } from './domain-error';
import { decodeCursor, encodeCursor } from './pagination';
import { createValidationPipe, inspectRawInput, Trim, unsafeTextReason } from './validation';

class Entry {
  @IsString()
  name: string;
}

class Request {
  @IsString()
  title: string;

  @ValidateNested({ each: true })
  @Type(() => Entry)
  entries: Entry[];
}

describe('unsafeTextReason', () => {
  it.each(['plain', 'émoji 🎫', '', 'ligne\nnouvelle', '\ud83c\udfab'])('accepts %j', (text) =>
    expect(unsafeTextReason(text)).toBeUndefined(),
  );
  it.each(['a\u0000b', '\u0000', 'a\ud800', '\udc00a', 'a\udc00\ud800', '\ud800\ud800\udc00x\ud800'])('refuses %j', (text) =>
    expect(unsafeTextReason(text)).toEqual(expect.any(String)),
  );
});

describe('inspectRawInput', () => {
  const valid = { title: 't', entries: [{ name: 'n' }] };

  it('finds nothing in a valid request', () => expect(inspectRawInput(valid, Request)).toEqual([]));

  it('names every field holding NUL or unpaired surrogates, nested and unknown ones too', () => {
    const fields = inspectRawInput({ title: 'a\u0000', entries: [{ name: 'ok' }, { name: '\ud800' }], extra: ['\udc00'] }, Request).map(
      (e) => e.field,
    );
    expect(fields).toEqual(['title', 'entries[1].name', 'extra', 'extra[0]']);
  });

  it.each(['toString', 'valueOf', 'constructor', 'prototype', 'hasOwnProperty', '__proto__'])(
    'refuses an own key named %s, at the top and in entries',
    (key) => {
      const top = JSON.parse(`{"${key}": 1, "title": "t", "entries": [{"name": "n", "${key}": 2}]}`);
      expect(inspectRawInput(top, Request)).toEqual([
        { field: key, message: `property ${key} should not exist` },
        { field: `entries[0].${key}`, message: `property ${key} should not exist` },
      ]);
    },
  );

  it('refuses entries of a nested list that are not objects', () => {
    expect(inspectRawInput({ title: 't', entries: [[], null, 'x', { name: 'n' }] }, Request).map((e) => e.field)).toEqual([
      'entries[0]',
      'entries[1]',
      'entries[2]',
    ]);
  });

  it('stops walking at a depth the HTTP layer never lets through', () => {
    let deep: unknown = 'a\u0000';
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(() => inspectRawInput({ title: deep }, Request)).not.toThrow();
  });
});

describe('the global pipe', () => {
  const pipe = createValidationPipe();
  const refusal = async (value: unknown) => {
    try {
      await pipe.transform(value, { type: 'body', metatype: Request });
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationFailedError);
      return (error as ValidationFailedError).errors;
    }
    throw new Error('accepted');
  };

  it('answers hostile text together with the other field errors, each once', async () => {
    expect(await refusal({ title: 'a\u0000', entries: 'no', nickname: 1 })).toEqual(
      expect.arrayContaining([
        { field: 'title', message: 'title must not contain NUL characters' },
        { field: 'nickname', message: 'property nickname should not exist' },
        expect.objectContaining({ field: 'entries' }),
      ]),
    );
    const errors = (await refusal({ title: 't', entries: [], nickname: 1 }))!;
    expect(errors.filter((e) => e.field === 'nickname')).toHaveLength(1);
  });

  it('still transforms a valid body into the DTO', async () => {
    const dto = await pipe.transform({ title: 't', entries: [{ name: 'n' }] }, { type: 'body', metatype: Request });
    expect(dto).toBeInstanceOf(Request);
    expect((dto as Request).entries[0]).toBeInstanceOf(Entry);
  });
});

class Named {
  @Trim()
  @IsString()
  @Length(1, 5)
  name: string;

  @IsOptional()
  @Trim({ upperCase: true })
  @IsString()
  country?: string;
}

describe('@Trim()', () => {
  const pipe = createValidationPipe();
  const read = (value: unknown) => pipe.transform(value, { type: 'body', metatype: Named }) as Promise<Named>;

  it('strips surrounding spaces before validating, upper-casing when asked', async () => {
    expect(await read({ name: '  alice ', country: ' cm\t' })).toMatchObject({ name: 'alice', country: 'CM' });
  });

  it('a value that is only spaces becomes empty, and is judged as such', async () => {
    await expect(read({ name: '   ' })).rejects.toBeInstanceOf(ValidationFailedError);
  });

  it('leaves what is not a string to the validators', async () => {
    await expect(read({ name: 12345 })).rejects.toMatchObject({
      errors: expect.arrayContaining([{ field: 'name', message: 'name must be a string' }]) as unknown,
    });
  });
});

describe('decodeCursor', () => {
  const id = '0f337719-beae-4580-8ccb-ad6a610d08cf';
  const raw = (text: string) => Buffer.from(text).toString('base64url');

  it('reads back what encodeCursor wrote, at the edges of the range too', () => {
    for (const at of ['2026-11-23T10:00:00.123Z', '0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']) {
      expect(decodeCursor(encodeCursor({ at: new Date(at), id }))).toEqual({ at: new Date(at), id });
    }
  });

  it.each([
    ['a year beyond 9999', raw(`+010000-01-01T00:00:00.000Z|${id}`)],
    ['a year before 1', raw(`-000001-01-01T00:00:00.000Z|${id}`)],
    ['another date spelling', raw(`2026-11-23|${id}`)],
    ['a trailing part', raw(`2026-11-23T10:00:00.000Z|${id}|x`)],
    ['base64 padding', `${raw(`2026-11-23T10:00:00.000Z|${id}`)}=`],
    ['not base64url', '%%%'],
  ])('refuses %s', (_what, cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(ValidationFailedError);
  });
});
