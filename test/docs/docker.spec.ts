/**
 * No Docker engine runs on the development and CI machines: these tests read the Dockerfile and
 * docker-compose.yml and check what the image and the local production-like run promise.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startProdCommand } from '../support/start-prod-command';
import { loadAppConfig } from '../../src/config/app-config';
import { parseYaml, type YamlValue } from './mini-yaml';

const ROOT = resolve(__dirname, '..', '..');
const read = (name: string) => readFileSync(resolve(ROOT, name), 'utf8');

interface Instruction {
  line: number;
  name: string;
  args: string;
}
interface Stage {
  image: string;
  alias?: string;
  instructions: Instruction[];
}

/** Instructions (continuations joined, comments dropped) grouped by stage; `${ARG}` of the global ARGs resolved in FROM. */
function parseDockerfile(text: string): { stages: Stage[]; all: Instruction[] } {
  const all: Instruction[] = [];
  let pending: { line: number; text: string } | undefined;
  text.split(/\r?\n/).forEach((raw, index) => {
    const trimmed = raw.trim();
    if (!pending && (trimmed === '' || trimmed.startsWith('#'))) return;
    if (pending && trimmed.startsWith('#')) return; // comment lines inside a continuation
    const current = pending ?? { line: index + 1, text: '' };
    const continued = trimmed.endsWith('\\');
    current.text += `${current.text ? ' ' : ''}${continued ? trimmed.slice(0, -1).trim() : trimmed}`;
    if (continued) pending = current;
    else {
      pending = undefined;
      const name = current.text.split(/\s/, 1)[0];
      all.push({ line: current.line, name: name.toUpperCase(), args: current.text.slice(name.length).trimStart() });
    }
  });
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  for (const instruction of all) {
    if (instruction.name === 'FROM') {
      const [image, as, alias] = instruction.args.replace(/--platform=\S+\s+/, '').split(/\s+/);
      const resolved = image.replace(/\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g, (_, name: string) => globalArgs.get(name) ?? '');
      stages.push({ image: resolved, alias: as?.toUpperCase() === 'AS' ? alias : undefined, instructions: [] });
    } else if (stages.length === 0) {
      if (instruction.name === 'ARG') {
        const [name, ...rest] = instruction.args.split('=');
        globalArgs.set(name.trim(), rest.join('=').trim());
      }
    } else stages[stages.length - 1].instructions.push(instruction);
  }
  return { stages, all };
}

/** KEY=value pairs of ENV instructions (the `ENV KEY value` form too). */
function envOf(stage: Stage): Record<string, string> {
  const env: Record<string, string> = {};
  for (const { args } of stage.instructions.filter((i) => i.name === 'ENV')) {
    if (!args.includes('=')) {
      const [key, ...value] = args.split(/\s+/);
      env[key] = value.join(' ');
      continue;
    }
    for (const pair of args.match(/(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*=("[^"]*"|\S*)/g) ?? []) {
      const [key, ...value] = pair.split('=');
      env[key] = value.join('=').replace(/^"|"$/g, '');
    }
  }
  return env;
}

const runs = (stage: Stage) => stage.instructions.filter((i) => i.name === 'RUN').map((i) => i.args);
const only = (stage: Stage, name: string) => {
  const found = stage.instructions.filter((i) => i.name === name);
  expect(found).toHaveLength(1);
  return found[0].args;
};
const execForm = (args: string) => JSON.parse(args) as string[];

describe('the Dockerfile', () => {
  const { stages, all } = parseDockerfile(read('Dockerfile'));
  const runtime = stages[stages.length - 1];
  const build = stages.find((s) => s.alias === 'build')!;

  it('is multi-stage, every stage on the Node.js 24 LTS slim image', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.image).toMatch(/^node:24(\.\d+)*-(bookworm-)?slim(@sha256:[0-9a-f]{64})?$/);
  });

  it('names in .nvmrc the Node.js major the image runs: development runs what production runs', () => {
    // The oldest supported development machines run Node.js 20 (package.json engines: >=20.19);
    // .nvmrc is the version `nvm use` picks, the image's; CI runs the suite on both (.ci/run).
    const major = /^node:(\d+)/.exec(runtime.image)![1];
    expect(read('.nvmrc').trim()).toBe(major);
    for (const stage of stages) expect(stage.image.startsWith(`node:${major}`)).toBe(true);
  });

  it('copies into the build stage every configuration file `npm run build` reads (nest build, swc)', () => {
    const copied = build.instructions
      .filter((i) => i.name === 'COPY' && !i.args.includes('--from='))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.scripts.build).toMatch(/\bnest build\b/);
    for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json', '.swcrc', 'nest-cli.json']) expect(copied).toContain(file);
  });

  it("installs without the project's postinstall, which needs files copied later (npm run build generates the client)", () => {
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.scripts.postinstall).toBe('node scripts/prisma-generate.js');
    expect(pkg.scripts.build).toMatch(/^npm run prisma:generate && /);
    for (const stage of stages)
      for (const command of runs(stage).filter((c) => /\bnpm ci\b/.test(c))) expect(command).toContain('--ignore-scripts');
  });

  it('builds in a build stage: all dependencies, then npm run build', () => {
    expect(build).toBeDefined();
    expect(build).not.toBe(runtime);
    const commands = runs(build);
    const install = commands.findIndex((c) => /\bnpm ci\b/.test(c) && !c.includes('--omit=dev'));
    const compile = commands.findIndex((c) => /\bnpm run build\b/.test(c));
    expect(install).toBeGreaterThanOrEqual(0);
    expect(compile).toBeGreaterThan(install);
  });

  it('installs only production dependencies in the runtime stage and takes the compiled service from the build', () => {
    const installs = runs(runtime).filter((c) => /\bnpm (ci|install|i)\b/.test(c));
    expect(installs.length).toBeGreaterThan(0);
    for (const command of installs) expect(command).toMatch(/\bnpm ci\b.*--omit=dev/);
    expect(runs(runtime).join('\n')).not.toMatch(/npm run build|\btsc\b/);
    const copiedFromBuild = runtime.instructions.filter((i) => i.name === 'COPY' && i.args.includes('--from=build')).map((i) => i.args);
    for (const part of ['dist', 'prisma', 'src']) expect(copiedFromBuild.some((c) => new RegExp(`/app/${part}\\s`).test(c))).toBe(true);
  });

  it('keeps in production dependencies what `npm run db:migrate` needs in the runtime image', () => {
    const pkg = JSON.parse(read('package.json'));
    expect(pkg.scripts['db:migrate']).toMatch(/^node -r @swc-node\/register /);
    expect(pkg.dependencies['@swc-node/register']).toBeDefined();
    expect(pkg.dependencies['@swc/core']).toBeDefined();
  });

  it('runs with NODE_ENV=production as a non-root user', () => {
    expect(envOf(runtime).NODE_ENV).toBe('production');
    const user = only(runtime, 'USER');
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const userAt = runtime.instructions.findIndex((i) => i.name === 'USER');
    const cmdAt = runtime.instructions.findIndex((i) => i.name === 'CMD');
    expect(userAt).toBeLessThan(cmdAt);
  });

  it('exposes 3000 and checks its health on /health/live with node', () => {
    expect(only(runtime, 'EXPOSE')).toBe('3000');
    const healthcheck = only(runtime, 'HEALTHCHECK');
    const command = /\bCMD\s+(\[.*\])$/.exec(healthcheck);
    expect(command).not.toBeNull();
    const argv = execForm(command![1]);
    expect(argv[0]).toBe('node');
    expect(argv.join(' ')).toContain('/health/live');
  });

  it('starts the compiled service as `npm run start:prod` does, and never migrates on start', () => {
    const { env, nodeArgs } = startProdCommand();
    // node, its options (heap and collector settings), the compiled service in one file: the same in the image.
    expect(['node', ...nodeArgs].join(' ')).toMatch(/^node (--[a-z-]+(=\S+)? )*dist\/main\.bundle\.js$/);
    expect(execForm(only(runtime, 'CMD'))).toEqual(['node', ...nodeArgs]);
    for (const [name, value] of Object.entries(env)) expect(envOf(runtime)[name]).toBe(value);
    expect(all.filter((i) => i.name === 'ENTRYPOINT')).toEqual([]);
    expect(only(runtime, 'CMD')).not.toMatch(/migrat|--migrate/);
  });

  it('keeps local configuration, dependencies and build output out of the build context', () => {
    const ignored = read('.dockerignore')
      .split(/\r?\n/)
      .map((l) => l.trim());
    for (const entry of ['.env', 'node_modules', 'dist', '.git', '.data']) expect(ignored).toContain(entry);
    expect(
      all
        .filter((i) => i.name === 'COPY' || i.name === 'ADD')
        .map((i) => i.args)
        .join('\n'),
    ).not.toMatch(/(^|\s)\.env\b/);
  });
});

describe('docker-compose.yml', () => {
  const compose = parseYaml(read('docker-compose.yml')) as Record<string, any>;
  const services = compose.services as Record<string, Record<string, any>>;
  const env = (service: string) => services[service].environment as Record<string, YamlValue>;
  const asStrings = (values: Record<string, YamlValue>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)]));
  const command = (service: string) =>
    Array.isArray(services[service].command) ? services[service].command.join(' ') : String(services[service].command);

  it('has PostgreSQL 16 with a volume and a health check', () => {
    const postgres = services.postgres;
    expect(postgres.image).toMatch(/^postgres:16\b/);
    expect(postgres.volumes.some((v: string) => v.endsWith(':/var/lib/postgresql/data'))).toBe(true);
    expect(postgres.healthcheck.test.join(' ')).toContain('pg_isready');
    const volume = postgres.volumes[0].split(':')[0];
    expect(Object.keys(compose.volumes)).toContain(volume);
  });

  it('migrates in a one-shot service once PostgreSQL is healthy', () => {
    expect(command('migrate')).toBe('npm run db:migrate');
    expect(services.migrate.depends_on.postgres.condition).toBe('service_healthy');
    expect(services.migrate.restart).toBe('no');
  });

  it('starts the api only after the migrations completed, without migrating itself', () => {
    const api = services.api;
    expect(api.depends_on.migrate.condition).toBe('service_completed_successfully');
    // The image's own command (the one `npm run start:prod` runs), not a second spelling of it.
    const image = parseDockerfile(read('Dockerfile')).stages.at(-1)!;
    expect(command('api')).toBe(execForm(only(image, 'CMD')).join(' '));
    expect(api.ports).toContain('3000:3000');
    for (const name of ['api', 'migrate', 'sandbox']) expect(services[name].build).toBe('.');
  });

  it('gives the api and migrate one production configuration that the service accepts', () => {
    const apiEnv = asStrings(env('api'));
    expect(asStrings(env('migrate'))).toEqual(apiEnv);
    expect(apiEnv.NODE_ENV).toBe('production');
    // Every production variable is set and valid: the service would not exit 78.
    const config = loadAppConfig(apiEnv);
    expect(config.isProduction).toBe(true);
    expect(config.databaseUrl).toMatch(/@postgres:5432\//);
  });

  it('uses obviously-placeholder secrets, consistent with the postgres service', () => {
    const apiEnv = asStrings(env('api'));
    for (const name of ['CALLBACK_SIGNING_SECRET', 'AUTH_JWT_SECRET']) expect(apiEnv[name]).toContain('replace-me');
    expect(Buffer.from(apiEnv.DATA_ENCRYPTION_KEY, 'base64').toString()).toContain('replace-me');
    const password = String(services.postgres.environment.POSTGRES_PASSWORD);
    expect(password).toContain('replace-me');
    const url = new URL(apiEnv.DATABASE_URL);
    expect(decodeURIComponent(url.password)).toBe(password);
    expect(url.username).toBe(String(services.postgres.environment.POSTGRES_USER));
    expect(url.pathname).toBe(`/${String(services.postgres.environment.POSTGRES_DB)}`);
  });

  it('points the provider at the sandbox service, listening on the compose network, and the callbacks at the api', () => {
    const sandbox = services.sandbox;
    expect(command('sandbox')).toBe('npm run sandbox');
    const provider = new URL(String(env('api').PROVIDER_BASE_URL));
    expect(provider.port).toBe(String(sandbox.environment.SANDBOX_PORT));
    expect(provider.hostname).toBe('sandbox');
    expect(sandbox.environment.SANDBOX_HOST).toBe('0.0.0.0');
    const publicUrl = new URL(String(env('api').PUBLIC_BASE_URL));
    expect(publicUrl.hostname).toBe('api');
    expect(publicUrl.port).toBe(String(env('api').PORT));
  });
});

describe('the compose file reader', () => {
  it('reads anchors, merge keys, aliases, flow lists and quoted scalars', () => {
    const doc = parseYaml(
      [
        'x: &base',
        '  a: 1',
        '  b: "two" # comment',
        's:',
        '  <<: *base',
        '  b: three',
        '  c: ["x", "y"]',
        "  d: 'it''s'",
        '  e:',
        '    - 1:2',
        '    - "3:4"',
      ].join('\n'),
    );
    expect(doc).toEqual({ x: { a: 1, b: 'two' }, s: { a: 1, b: 'three', c: ['x', 'y'], d: "it's", e: ['1:2', '3:4'] } });
  });

  it('refuses what it does not understand instead of misreading it', () => {
    expect(() => parseYaml('a: {b: 1}')).toThrow(/line 1/);
    expect(() => parseYaml('a:\n  - b: 1')).toThrow(/maps inside lists/);
  });
});
