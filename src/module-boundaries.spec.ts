import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GLOBAL_MODULE_METADATA } from '@nestjs/common/constants';
import { ConfigModule } from '@nestjs/config';
import { loadAppConfig } from './config/app-config';
import { configModuleFor } from './config/config.module';

/** Every `*.module.ts` of src/, with the classes it exports. */
async function moduleClasses(): Promise<{ file: string; name: string; isGlobal: boolean }[]> {
  const found: { file: string; name: string; isGlobal: boolean }[] = [];
  for (const area of readdirSync(__dirname, { withFileTypes: true })) {
    if (!area.isDirectory()) continue;
    for (const file of readdirSync(join(__dirname, area.name)).filter((name) => name.endsWith('.module.ts'))) {
      const exported = (await import(join(__dirname, area.name, file))) as Record<string, unknown>;
      for (const [name, value] of Object.entries(exported)) {
        if (typeof value !== 'function' || !name.endsWith('Module')) continue;
        found.push({ file: `${area.name}/${file}`, name, isGlobal: Reflect.getMetadata(GLOBAL_MODULE_METADATA, value) === true });
      }
    }
  }
  return found;
}

describe('module boundaries', () => {
  it('only configuration and logging are global: every other module is imported where it is used', async () => {
    const modules = await moduleClasses();
    expect(modules.map((m) => m.name)).toEqual(expect.arrayContaining(['DatabaseModule', 'ProviderModule', 'AuthModule', 'MetricsModule']));
    expect(modules.filter((m) => m.isGlobal).map((m) => m.name)).toEqual(['LoggingModule']);
    // Configuration is @nestjs/config's ConfigModule, made global by its forRoot (src/config/config.module.ts).
    const config = await configModuleFor(loadAppConfig({}));
    expect(config).toMatchObject({ module: ConfigModule, global: true });
  });
});
