export { createClient, type ClientOptions, type MerchantClient } from './create-client.js';
export { ProblemError, type Problem, type FieldError } from './problem.js';
export { FINAL_STATUSES, type OrderStatus, type OrderStatusEvent, type WatchOrderOptions } from './watch-order.js';
export type { RetryOptions } from './retry.js';
export type { CallOptions, IdempotentCallOptions, JsonAnswer, OperationId, QueryOf, RequestBody } from './operation-types.js';
export type { components, operations, paths } from './openapi/merchant-api.js';
export { OPERATIONS } from './openapi/operations.js';
