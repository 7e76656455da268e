/**
 * The Swagger UI in a real browser: Debian's chromium driven by playwright-core, for the `system`
 * jest project (docs/testing.md). `.ci/run` installs chromium when it is missing; without it these
 * tests fail, never skip.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/** Fails at once, saying how to get it, when chromium is missing: called first, before anything is started. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} does not exist: apt-get install -y chromium (bash .ci/run installs it), or set CHROMIUM_PATH`);
}

/** Chromium, headless, with the common flags and a test's own `extraArgs`. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  requireChromium();
  return chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, ...extraArgs], timeout: 15_000 });
}

/** Expands the operation `method` `path` and presses "Try it out". */
export async function tryOut(page: Page, method: 'get' | 'post', path: string): Promise<Locator> {
  const operation = page.locator(`.opblock.opblock-${method}`).filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });
  await operation.locator('.opblock-summary').first().click();
  await operation.locator('button.try-out__btn').click();
  return operation;
}

/** Scrolls the page so that the operation starts at its top (what a screenshot then shows). */
export async function scrollTo(operation: Locator): Promise<void> {
  await operation
    .locator('.opblock-summary')
    .first()
    .evaluate((element) => element.scrollIntoView({ block: 'start' }));
}

/** Status and body of the response an executed operation shows. */
export async function liveResponse(operation: Locator): Promise<{ status: string; body: string }> {
  const live = operation.locator('.live-responses-table');
  const status = live.locator('tbody .response .response-col_status').first();
  await status.waitFor();
  const body = live.locator('.response-col_description .highlight-code').first();
  await body.waitFor();
  return { status: (await status.innerText()).trim(), body: await body.innerText() };
}
