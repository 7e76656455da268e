import { ApiProperty, ApiPropertyOptional, type OpenAPIObject } from '@nestjs/swagger';

class FieldErrorDto {
  @ApiProperty({ example: 'amount' })
  field: string;

  @ApiProperty({ example: 'XAF allows no decimals' })
  message: string;
}

/** RFC 9457 problem details, as every error of this API is shaped. */
export class ProblemDetailsDto {
  @ApiProperty({ example: 'https://docs.payments-bff.local/problems/validation_failed' })
  type: string;

  @ApiProperty({ example: 'The request is invalid' })
  title: string;

  @ApiProperty({ example: 400 })
  status: number;

  @ApiProperty({ example: 'One or more fields are invalid.' })
  detail: string;

  @ApiProperty({ example: 'validation_failed', description: 'Stable machine-readable code' })
  code: string;

  @ApiProperty({ example: '4f0c8a2e-6d7b-4c55-9a5e-2c1d0e9b7a11', description: 'Also in the x-request-id header and the logs' })
  requestId: string;

  @ApiPropertyOptional({ type: [FieldErrorDto], description: 'Validation failures, field by field' })
  errors?: FieldErrorDto[];

  @ApiPropertyOptional({
    example: true,
    description: 'On provider errors: true when nothing happened at the provider, false when it may have acted (the operation is UNKNOWN)',
  })
  outcomeKnown?: boolean;

  @ApiPropertyOptional({
    example: 120,
    description: 'With 429 `provider_budget_exhausted`: seconds until a call fits the budget again (also in Retry-After)',
  })
  retryAfterSeconds?: number;
}

const STANDARD: Record<string, string> = {
  '400': 'Invalid request: problem+json with `errors` listing each field',
  '401': 'Missing, invalid or expired bearer token',
  '403': 'The token’s roles do not allow this',
  '404': 'No such resource, or not yours',
  '429': 'Too many requests (Retry-After)',
  '500': 'Unexpected error; quote the requestId',
};
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

/**
 * Every error answer of the document is `application/problem+json` with the ProblemDetails
 * schema: the responses routes declare get the schema, and each operation gets the ones that
 * apply to it (400 with input, 401 and 403 when secured, 404 on a resource path, 500 always).
 */
export function documentProblemResponses(document: OpenAPIObject): OpenAPIObject {
  const schema = { $ref: '#/components/schemas/ProblemDetailsDto' };
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      if (!operation) continue;
      const secured = (operation.security ?? []).length > 0;
      const hasInput = Boolean(operation.requestBody) || (operation.parameters ?? []).some((p) => 'in' in p && p.in === 'query');
      const wanted = [
        '500',
        ...(hasInput ? ['400'] : []),
        ...(secured ? ['401'] : []),
        ...(/\{[^{}]+\}/.test(path) && secured ? ['404'] : []),
      ];
      for (const status of wanted) operation.responses[status] ??= { description: STANDARD[status] };
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!/^[45]\d\d$/.test(status) || !response || '$ref' in response) continue;
        response.content = { 'application/problem+json': { schema } };
      }
    }
  }
  return document;
}
