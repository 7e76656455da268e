/**
 * A lone high surrogate (not followed by a low one) or a lone low surrogate (not preceded by a
 * high one): no Unicode text at all. PostgreSQL's jsonb refuses it and UTF-8 cannot encode it.
 */
export const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The same, for replacing every one of them. */
export const UNPAIRED_SURROGATES = new RegExp(UNPAIRED_SURROGATE.source, 'g');
