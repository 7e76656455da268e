/**
 * Compile-time proof that a domain union (declared once, with its value list, in an area's types
 * file) holds exactly the values of its Prisma enum. Repositories state it for the enums they map,
 * so that rows need no cast and adding a value on one side only stops the build:
 *   export type CardEnums = [Proven<SameValues<CardStatus, DbCardStatus>>];
 */
export type SameValues<Domain, Database> = [Domain] extends [Database] ? ([Database] extends [Domain] ? true : false) : false;

/** Accepts only `true`: `Proven<SameValues<A, B>>` fails to compile when A and B differ. */
export type Proven<Claim extends true> = Claim;
