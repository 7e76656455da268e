import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ResolvedSandboxOptions } from './sandbox.options';
import type { SandboxState } from './sandbox.state';

/** What every route module receives. */
export interface SandboxContext {
  opts: ResolvedSandboxOptions;
  state: SandboxState;
  log: (msg: string, data?: object) => void;
  /** Requests whose body was sent as JSON but could not be parsed. */
  malformed: WeakSet<FastifyRequest>;
}

/** The error body shape of each family of provider routes. */
export type ErrorShape =
  /** `{error: int, message}`: /api/action/* (auth and cards). */
  | 'action'
  /** `{success: false, message}`: /api/agent/* (init, distribution, pay-in shape (a)). */
  | 'agent'
  /** `{code: string, success: false, message}`: /api/agent/link/new. */
  | 'link-new';

export function shapeForPath(path: string): ErrorShape {
  if (path === '/api/agent/link/new') return 'link-new';
  if (path.startsWith('/api/agent/')) return 'agent';
  return 'action';
}

export function errorBody(shape: ErrorShape, status: number, message: string): Record<string, unknown> {
  switch (shape) {
    case 'agent':
      return { success: false, message };
    case 'link-new':
      return { code: String(status), success: false, message };
    case 'action':
    default:
      return { error: status, message };
  }
}

export function sendError(reply: FastifyReply, shape: ErrorShape, status: number, message: string): FastifyReply {
  return reply.code(status).send(errorBody(shape, status, message));
}

export function pathOf(request: FastifyRequest): string {
  const url = request.raw.url ?? request.url;
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** A header as one string; absent or repeated headers give undefined. */
export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return typeof value === 'string' ? value : undefined;
}

export function queryString(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header(request, 'authorization') ?? '');
  return match?.[1];
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim().length > 0;
}

export function isEmail(value: unknown): value is string {
  return typeof value === 'string' && value.length <= 254 && /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(value);
}

export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, as the provider formats `created_at`. */
export function providerDateTime(date = new Date()): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/**
 * Checks the bearer token (and, per family, x-api-key or x-sp-auth-token, and the agent rate limit).
 * Returns true when it has answered (the caller must then return the reply).
 */
export function guard(ctx: SandboxContext, request: FastifyRequest, reply: FastifyReply, kind: 'agent' | 'link-new' | 'card'): boolean {
  const shape: ErrorShape = kind === 'card' ? 'action' : kind;
  if (kind !== 'card') {
    const admitted = ctx.state.admitAgentRequest(request.ip, ctx.opts.agentHourlyLimit);
    if (!admitted.allowed) {
      ctx.log('agent rate limit exceeded', { ip: request.ip, path: pathOf(request) });
      reply.header('retry-after', String(admitted.retryAfterSeconds));
      sendError(reply, shape, 429, 'Too many requests');
      return true;
    }
  }
  const token = bearerToken(request);
  if (!token || !ctx.state.isTokenValid(token)) {
    sendError(reply, shape, 401, 'Unauthenticated');
    return true;
  }
  if (kind === 'card') {
    if (header(request, 'x-sp-auth-token') !== ctx.opts.spAuthToken) {
      sendError(reply, shape, 401, 'Invalid sp auth token');
      return true;
    }
  } else if (header(request, 'x-api-key') !== ctx.opts.apiKey) {
    sendError(reply, shape, 401, 'Invalid api key');
    return true;
  }
  return false;
}
