import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { UNPAIRED_SURROGATE } from './unicode';
import { Transform } from 'class-transformer';
import { getMetadataStorage } from 'class-validator';
import { ValidationFailedError, type FieldError } from './domain-error';

// Where `@Type(() => X)` is recorded; class-transformer does not declare this module's types
// (@nestjs/mapped-types reads it the same way).
const { defaultMetadataStorage } = require('class-transformer/cjs/storage') as {
  defaultMetadataStorage: { findTypeMetadata(target: object, propertyName: string): { typeFunction(): unknown } | undefined };
};

/** Flattens class-validator's tree into `{ field: 'distribution[0].rate', message }` pairs. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    const field = fieldPath(parent, error.property);
    for (const message of Object.values(error.constraints ?? {})) out.push({ field, message });
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

function fieldPath(parent: string, property: string | number): string {
  if (typeof property === 'number' || /^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

/**
 * Why a text cannot be accepted, or undefined: PostgreSQL refuses NUL in text (22021), and an
 * unpaired surrogate is no Unicode text at all (it cannot be encoded as UTF-8 for the database,
 * the provider or a log line without being silently replaced).
 */
export function unsafeTextReason(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (UNPAIRED_SURROGATE.test(text)) return 'must not contain unpaired surrogates (invalid Unicode)';
  return undefined;
}

/** Nested deeper than this, the walk stops: the HTTP layer refuses bodies nested beyond 32 levels. */
const MAX_INSPECTED_DEPTH = 64;

interface DtoShape {
  known: Set<string>;
  /** Properties validated as nested DTOs (`@ValidateNested` with `@Type`), and whether they are lists. */
  nested: Map<string, { type?: new () => unknown; each: boolean }>;
}

const shapes = new WeakMap<object, DtoShape>();

function shapeOf(metatype: new () => unknown): DtoShape {
  let shape = shapes.get(metatype);
  if (shape) return shape;
  const metadatas = getMetadataStorage().getTargetValidationMetadatas(metatype, '', true, false);
  shape = { known: new Set(metadatas.map((m) => m.propertyName)), nested: new Map() };
  for (const metadata of metadatas) {
    if (metadata.type !== 'nestedValidation') continue;
    const type = defaultMetadataStorage.findTypeMetadata(metatype, metadata.propertyName)?.typeFunction() as
      (new () => unknown) | undefined;
    shape.nested.set(metadata.propertyName, { type, each: metadata.each === true });
  }
  shapes.set(metatype, shape);
  return shape;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What class-validator cannot see in a request as it arrived, field by field:
 * - text that is not storable Unicode (NUL, unpaired surrogates), wherever it is;
 * - unknown fields, by own key against the DTO's declared properties: class-validator looks the
 *   key up in a plain object, so `toString`, `valueOf`, `constructor`... pass its whitelist as if
 *   declared, and Nest strips `__proto__`/`constructor` silently;
 * - an entry of a nested list that is not an object (`[[]]` passes `@ValidateNested`).
 */
export function inspectRawInput(value: unknown, metatype?: new () => unknown): FieldError[] {
  const errors: FieldError[] = [];
  walk(value, metatype, '', 0, errors);
  return errors;
}

function walk(value: unknown, metatype: (new () => unknown) | undefined, path: string, depth: number, errors: FieldError[]): void {
  if (typeof value === 'string') {
    const reason = unsafeTextReason(value);
    if (reason) errors.push({ field: path || 'body', message: `${path || 'body'} ${reason}` });
    return;
  }
  if (typeof value !== 'object' || value === null || depth > MAX_INSPECTED_DEPTH) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => walk(item, metatype, fieldPath(path, index), depth + 1, errors));
    return;
  }
  const shape = metatype ? shapeOf(metatype) : undefined;
  for (const key of Object.keys(value)) {
    const field = fieldPath(path, key);
    const item = (value as Record<string, unknown>)[key];
    if (shape && !shape.known.has(key)) {
      errors.push({ field, message: `property ${key} should not exist` });
      walk(item, undefined, field, depth + 1, errors);
      continue;
    }
    const nested = shape?.nested.get(key);
    if (nested?.each && Array.isArray(item)) {
      item.forEach((entry, index) => {
        const entryField = fieldPath(field, index);
        if (!isPlainObject(entry)) errors.push({ field: entryField, message: `each entry of ${key} must be an object` });
        walk(entry, nested.type, entryField, depth + 2, errors);
      });
      continue;
    }
    walk(item, nested && !nested.each && isPlainObject(item) ? nested.type : undefined, field, depth + 1, errors);
  }
}

/** Both lists, each (field, message) once, in order. */
function mergeFieldErrors(first: FieldError[], second: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return [...first, ...second].filter((error) => {
    const id = `${error.field}\u0000${error.message}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * The global pipe: whitelist, refuse unknown fields, transform, and answer every failure field by
 * field. Bodies and queries of a DTO are first inspected as they arrived (`inspectRawInput`), so
 * hostile text and structure are refused here, once for every route, before a handler runs.
 */
export class InputValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      stopAtFirstError: false,
      validationError: { target: false, value: false },
      exceptionFactory: (errors) => new ValidationFailedError(flattenValidationErrors(errors)),
    });
  }

  /**
   * A value the pipe does not validate (a path parameter typed as a string, the caller of
   * `@CurrentUser`) is answered as ValidationPipe answers it, without the two promises of its
   * `transform` and of this one: Nest awaits a pipe's answer either way.
   */
  override transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (!metadata.metatype || !this.toValidate(metadata)) {
      const passed: unknown = this.isTransformEnabled ? this.transformPrimitive(value, metadata) : value;
      return passed as Promise<unknown>;
    }
    return this.validateAndInspect(value, metadata);
  }

  private async validateAndInspect(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const inspected = (metadata.type === 'body' || metadata.type === 'query') && this.toValidate(metadata);
    const refused = inspected ? inspectRawInput(value, metadata.metatype as new () => unknown) : [];
    if (refused.length === 0) return super.transform(value, metadata);
    let others: FieldError[] = [];
    try {
      await super.transform(value, metadata);
    } catch (error) {
      // The other field errors of the same request, when the rest of the pipe can name them.
      if (error instanceof ValidationFailedError) others = error.errors ?? [];
    }
    throw new ValidationFailedError(mergeFieldErrors(refused, others));
  }
}

export function createValidationPipe(): ValidationPipe {
  return new InputValidationPipe();
}

/**
 * Surrounding spaces are not part of a value (a pasted email, a name typed with a trailing space):
 * strips them from a string field before it is validated; anything else is left for the validators.
 */
export function Trim(options: { upperCase?: boolean } = {}): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) => {
    if (typeof value !== 'string') return value;
    return options.upperCase ? value.trim().toUpperCase() : value.trim();
  });
}
