/**
 * What replaces a personal value when its customer is erased (src/customers): fixed, so that
 * finance sees at once that a value was erased, and so that an area can tell an erased record.
 */
export const ERASED_MARK = '[erased]';
