export type ProviderHost = 'base' | 'link';
export type ProviderArea = 'auth' | 'payin' | 'cards' | 'wallet-links' | 'distributions';

export interface ProviderRequest {
  area: ProviderArea;
  /** Logical name, stable for logs and metrics: `payin.collect`, `cards.get`, ... */
  endpoint: string;
  host: ProviderHost;
  method: 'GET' | 'POST';
  /** Path with its parameters already encoded. */
  path: string;
  query?: Record<string, string | number>;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface ProviderResponse<T = unknown> {
  status: number;
  data: T;
}
