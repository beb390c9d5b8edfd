// Issue 23 in the window: the Start run form's Project folder field (a path on the coordinator's machine, as a
// browser tab has no picker) starts a run of a real project folder this test writes (train.py importing its own
// mylib.py, reading data/*.txt, writing to GPU_SHARE_OUTPUT_DIR); a path that is not there is refused at the
// field; the run page shows the snapshot, and Download output saves a tarball whose contents are checked.
// Screenshots of the run page at 1280 and 900 px, light and dark, and of Download output at both. A run whose Python modules this machine cannot
// import holds it out: its node card says so, with the reason, at 1280 and 900 px.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAKE_GPUS_YAML, fakeGpuEnv, gpuShareOut, openApp, screenshot, tempDir } from './helpers/app';
import { browser, dataDir, serve, useServedApp } from './helpers/served-app';

const PYTHON = process.env.GPU_SHARE_PYTHON ?? '/usr/bin/python3';

function writeProject(): string {
  const dir = path.join(tempDir('gpu-share-e2e-project-'), 'proj');
  mkdirSync(path.join(dir, 'data'), { recursive: true });
  writeFileSync(path.join(dir, 'mylib.py'), 'def shout(text):\n    return text.upper()\n');
  writeFileSync(path.join(dir, 'data', 'a.txt'), 'alpha\n');
  writeFileSync(path.join(dir, 'data', 'b.txt'), 'beta\n');
  writeFileSync(path.join(dir, '.gitignore'), 'secret.txt\n');
  writeFileSync(path.join(dir, 'secret.txt'), 'never shipped\n');
  writeFileSync(
    path.join(dir, 'train.py'),
    [
      'import json, os',
      'import mylib',
      "data = os.environ['GPU_SHARE_DATA_DIR']",
      "files = sorted(os.listdir(data))",
      "out = os.environ['GPU_SHARE_OUTPUT_DIR']",
      "if os.environ.get('RANK', '0') == '0':",
      "    with open(os.path.join(out, 'model.txt'), 'w') as f:",
      "        f.write(mylib.shout(' '.join(open(os.path.join(data, n)).read().strip() for n in files)))",
      "print(json.dumps({'step': 1, 'total_steps': 1, 'loss': 0.5}), flush=True)",
      '',
    ].join('\n'),
  );
  return dir;
}

/** This machine as the one node, so the Nodes view has its card (the app's own worker is its member). */
const THIS_MACHINE = hostname().toLowerCase();
const CLUSTER = `nodes:\n  - name: ${THIS_MACHINE}\n    host: localhost\n${FAKE_GPUS_YAML}    max_adapters: 2\n`;
const ABSENT_MODULE = 'gpu_share_e2e_absent_module';

let projectDir = '';

useServedApp({ dirPrefix: 'gpu-share-e2e-project-run-', clusterYaml: CLUSTER, serve: () => ({ env: { ...fakeGpuEnv(), GPU_SHARE_PYTHON: PYTHON } }) });

describe('a run of your own project from the window', () => {
  it('starts it from the Project folder field (a missing folder refused at the field) and shows the snapshot', async () => {
    const { page } = browser;
    const project = writeProject();
    projectDir = project;
    await openApp(page, serve.url);
    await page.click('nav [data-view="runs"]');
    const form = page.locator('[data-testid="start-run-form"]');
    await form.waitFor();
    // A browser tab has no picker: the hint says the path is on the coordinator's machine.
    expect(await form.locator('[data-testid="pick-project"]').count()).toBe(0);
    expect(await form.locator('#run-project-hint').textContent()).toMatch(/coordinator's machine/);

    await form.locator('input[name="name"]').fill('own project');
    await form.locator('input[name="project"]').fill(`${project}-missing`);
    await form.locator('textarea[name="command"]').fill('train.py');
    await form.locator('input[name="samples"]').fill('8');
    await form.locator('input[name="minWorkers"]').fill('1');
    await form.locator('input[name="maxWorkers"]').fill('1');
    await form.getByRole('button', { name: 'Start run' }).click();
    await page.waitForSelector('#run-project-error', { timeout: 30_000 });
    expect(await page.textContent('#run-project-error')).toContain('-missing');

    await form.locator('input[name="project"]').fill(project);
    await form.locator('input[name="data"]').fill('data');
    await form.getByRole('button', { name: 'Start run' }).click();
    const card = page.locator('[data-testid="run-project-card"]');
    await card.waitFor({ timeout: 60_000 });
    const snapshot = (await page.getAttribute('[data-testid="run-project-snapshot"]', 'data-snapshot')) ?? '';
    expect(snapshot).toMatch(/^[0-9a-f]{64}$/);
    expect(await page.textContent('[data-testid="run-project-snapshot"] code')).toBe(snapshot.slice(0, 12));
    // train.py, mylib.py, .gitignore, data/a.txt, data/b.txt: secret.txt is gitignored.
    expect(await page.textContent('[data-testid="run-project-size"]')).toMatch(/^5 files/);

    for (const [width, colorScheme] of [[1280, 'light'], [1280, 'dark'], [900, 'light'], [900, 'dark']] as const) {
      await page.setViewportSize({ width, height: 1000 });
      await page.emulateMedia({ colorScheme });
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, `run-project-${width}-${colorScheme}`);
    }
    expect(browser.problems.filter((p) => !/Failed to load resource/.test(p))).toEqual([]);
  }, 300_000);

  // It needs the first test's run (which trains on the app's own worker and ends with rank 0's output).
  it('downloads the output as a tarball holding what rank 0 wrote', async () => {
    const { page } = browser;
    const card = page.locator('[data-testid="run-project-card"]');
    await page.setViewportSize({ width: 1280, height: 1000 });
    const done = await page.waitForSelector('[data-testid="run-artifact"]', { timeout: 120_000 }).catch(() => null);
    if (!done) {
      await screenshot(page, 'run-project-no-artifact');
      expect.fail(`no output after 120 s; run: ${await page.textContent('[data-testid="run-cause"]')} / ${await page.textContent('[data-testid="run-outcome"]')} / members: ${await card.locator('[data-testid="run-project-members"]').textContent().catch(() => 'none')}`);
    }
    expect(await page.getAttribute('[data-testid="run-artifact"]', 'data-partial')).toBe('false');
    for (const width of [1280, 900]) {
      await page.setViewportSize({ width, height: 1000 });
      await card.scrollIntoViewIfNeeded();
      await screenshot(page, `run-project-output-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 1000 });
    const [download] = await Promise.all([page.waitForEvent('download'), card.getByRole('button', { name: /Download output/ }).click()]);
    const saved = path.join(tempDir('gpu-share-e2e-download-'), download.suggestedFilename());
    await download.saveAs(saved);
    expect(download.suggestedFilename()).toMatch(/^own-project-output-[0-9a-f]{12}\.tar\.gz$/);
    const listing = execFileSync('tar', ['-tzf', saved], { encoding: 'utf8' });
    expect(listing).toMatch(/model\.txt/);
    const model = execFileSync('tar', ['-xzOf', saved, ...listing.split('\n').filter((l) => l.endsWith('model.txt'))], { encoding: 'utf8' });
    expect(model).toBe('ALPHA BETA');
  }, 300_000);

  it("holds this machine out of a run whose Python modules it cannot import, and its node card says why", async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.emulateMedia({ colorScheme: 'light' });
    const form = page.locator('[data-testid="start-run-form"]');
    await form.locator('input[name="name"]').fill('held project');
    await form.locator('input[name="project"]').fill(projectDir);
    await form.locator('input[name="data"]').fill('data');
    await form.locator('input[name="pythonCheck"]').fill(`json, ${ABSENT_MODULE}`);
    await form.getByRole('button', { name: 'Start run' }).click();
    const detail = page.locator('.run-detail[data-state="waiting"]');
    await expect.poll(async () => (await detail.count()) > 0 && (await detail.getAttribute('data-run-id')) !== null, { timeout: 60_000 }).toBe(true);
    const runId = (await detail.getAttribute('data-run-id'))!;
    // The run waits, and its waiting reason names the module; the member is failed on the run page.
    await expect.poll(() => page.textContent('[data-testid="run-cause"]'), { timeout: 120_000 }).toContain(ABSENT_MODULE);
    await page.locator('[data-testid="run-project-members"] li[data-status="failed"]').waitFor();

    await page.click('nav [data-view="nodes"]');
    const hold = page.locator(`[data-node-card="${THIS_MACHINE}"] [data-testid="run-holds"] li[data-run-id="${runId}"]`);
    await hold.waitFor({ timeout: 30_000 });
    const text = (await hold.textContent()) ?? '';
    expect(text).toMatch(/^Held out of run "held project": /);
    expect(text).toContain(`'${ABSENT_MODULE}'`);
    expect(text).not.toContain("'json'");
    for (const width of [1280, 900]) {
      await page.setViewportSize({ width, height: 1000 });
      await hold.scrollIntoViewIfNeeded();
      await screenshot(page, `run-project-hold-${width}`);
    }
    // The link opens the run.
    await hold.getByRole('button').click();
    await page.locator(`.run-detail[data-run-id="${runId}"]`).waitFor();

    // Once the run is stopped, nothing holds the machine any more.
    await gpuShareOut(dataDir, ['runs', 'stop', runId]);
    await page.click('nav [data-view="nodes"]');
    await expect.poll(() => page.locator(`[data-node-card="${THIS_MACHINE}"] [data-testid="run-holds"]`).count(), { timeout: 60_000 }).toBe(0);
  }, 300_000);
});
