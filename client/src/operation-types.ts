/**
 * The types every generated method signature (src/openapi/operations.ts) is written with: each is
 * read from openapi-typescript's `operations` by operationId, so nothing here repeats the document.
 */
import type { operations } from './openapi/merchant-api.js';

export type OperationId = keyof operations;

/** What the generator records of each operation. */
export interface OperationSpec {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE' | 'PATCH';
  path: string;
  pathParams: readonly string[];
  body: 'required' | 'optional' | 'none';
  /** The operation declares the Idempotency-Key header: it moves money or creates a provider object. */
  idempotent: boolean;
  parseAs: 'json' | 'text' | 'blob' | 'stream';
}

type Parameters<Id extends OperationId> = operations[Id]['parameters'];

/** The value of path parameter `Name` of operation `Id`. */
export type PathParam<Id extends OperationId, Name extends string> =
  NonNullable<Parameters<Id>['path']> extends Record<Name, infer Value> ? Value : string;

/** The JSON request body of operation `Id`. */
export type RequestBody<Id extends OperationId> =
  NonNullable<operations[Id]['requestBody']> extends { content: { 'application/json': infer Body } } ? Body : never;

/** The query parameters of operation `Id`. */
export type QueryOf<Id extends OperationId> = NonNullable<Parameters<Id>['query']>;

type SuccessStatus = 200 | 201 | 202;

/** The JSON body of operation `Id`'s success answer. */
export type JsonAnswer<Id extends OperationId> = {
  [Status in Extract<keyof operations[Id]['responses'], SuccessStatus>]: operations[Id]['responses'][Status] extends {
    content: { 'application/json': infer Body };
  }
    ? Body
    : never;
}[Extract<keyof operations[Id]['responses'], SuccessStatus>];

/** What every call takes after its path parameters and body. */
export interface BaseCallOptions {
  /** Aborts the call, its retries and their waits. */
  signal?: AbortSignal;
  /** More request headers (the client sets authorization, content-type and Idempotency-Key itself). */
  headers?: Record<string, string>;
}

export type CallOptions<Id extends OperationId> = BaseCallOptions & ([QueryOf<Id>] extends [never] ? unknown : { query?: QueryOf<Id> });

export type IdempotentCallOptions<Id extends OperationId> = CallOptions<Id> & {
  /**
   * The operation's Idempotency-Key. Generated (crypto.randomUUID) when absent; give your own to
   * retry the same operation later (after a reload, say) without doing it twice.
   */
  idempotencyKey?: string;
};
