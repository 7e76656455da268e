/** Settings of `npm run sandbox` (the standalone provider simulator), read once from the environment. */
export interface SandboxCliConfig {
  port: number;
  /** 127.0.0.1 by default; 0.0.0.0 to serve other containers (docker-compose.yml). */
  host: string;
  verbose: boolean;
}

export function loadSandboxCliConfig(env: Record<string, string | undefined> = process.env): SandboxCliConfig {
  const problems: string[] = [];
  const rawPort = env.SANDBOX_PORT?.trim() || '4010';
  const port = Number(rawPort);
  if (!/^\d+$/.test(rawPort) || port > 65535) problems.push(`SANDBOX_PORT must be an integer between 0 and 65535 (got "${rawPort}")`);
  const host = env.SANDBOX_HOST?.trim() || '127.0.0.1';
  if (!/^\d{1,3}(\.\d{1,3}){3}$|^[0-9a-fA-F]*:[0-9a-fA-F:]*$|^localhost$/.test(host))
    problems.push(`SANDBOX_HOST must be an IP address to listen on (got "${host}")`);
  if (problems.length) throw new Error(problems.join('; '));
  return { port, host, verbose: ['1', 'true'].includes(env.SANDBOX_VERBOSE?.trim() ?? '') };
}
