// Drives a real VS Code (code-server) in Debian's Chromium and checks what the pallas-ls
// extension shows: squiggles, Problems entries, hovers, quick fixes, and a clean file.
// Env: URL (workbench with the folder open), WORKSPACE (that folder), EXPECTED (expected/),
// LOGS (code-server's logs dir), OUT (where the screenshot goes), E2E_TIMEOUT_MS (per wait).
import { chromium } from 'playwright-core';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const { URL: url, WORKSPACE: workspace, EXPECTED: expectedDir, LOGS: logsDir } = process.env;
const out = process.env.OUT || '.';
const T = Number(process.env.E2E_TIMEOUT_MS || 60000);
const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const t0 = Date.now();
const log = (...a) => console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

const CASES = [
  {
    file: 'opt_level_kernel.py',
    code: 'PAL001',
    covered: 'opt_level=2',
    message: 'ValueError: explicit opt_level is only supported for SparseCore kernels',
    hover: 'An explicit opt_level was passed for a non-sparsecore kernel',
    fixTitle: 'Remove opt_level for TensorCore kernels',
  },
  {
    file: 'conv_precision_kernel.py',
    code: 'PAL002',
    covered: 'precision=',
    message: 'Per-operand conv precision unsupported',
    hover: 'The convolution precision parser in Mosaic only supports a single contract precision',
    fixTitle: 'for both operands',
  },
];
const CLEAN = 'clean_kernel.py';
const SETTINGS = process.env.SETTINGS;
const BARE_PYTHON = process.env.BARE_PYTHON || '/usr/bin/python3';
const SERVER_EXE = process.env.SERVER_EXE;

/**
 * Edits the user settings as a user does: "Preferences: Open User Settings (JSON)", replace the
 * text, save. (code-server does not pick up writes to settings.json from outside.)
 */
async function editSettings(change) {
  const settings = JSON.parse(readFileSync(SETTINGS, 'utf8'));
  change(settings);
  await page.keyboard.press('Control+Shift+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill('>Preferences: Open User Settings (JSON)');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Open User Settings (JSON)' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab.active', { hasText: 'settings.json' }).waitFor();
  await editor.locator('.view-lines').first().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(JSON.stringify(settings)); // one line: no auto-indent or auto-closing
  await page.keyboard.press('Control+S');
  await until('settings.json saved', () => {
    try { return JSON.stringify(JSON.parse(readFileSync(SETTINGS, 'utf8'))) === JSON.stringify(settings); } catch { return false; }
  });
  const tab = page.locator('.tabs-container .tab', { hasText: 'settings.json' }).first();
  await tab.hover();
  await tab.locator('.tab-actions .action-label').first().click();
  await tab.waitFor({ state: 'detached' });
}

let step = 'start';
const checks = [];
function pass(name, detail = '') {
  checks.push(name);
  log(`PASS ${name}${detail ? ': ' + detail : ''}`);
}

/** Bounded polling for conditions that are not DOM states (files on disk, logs). */
async function until(what, fn, timeout = T) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
}

function findFiles(dir, pred, acc = []) {
  if (!existsSync(dir)) return acc;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) findFiles(p, pred, acc);
    else if (pred(name)) acc.push(p);
  }
  return acc;
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
});
const page = await browser.newPage({ viewport: { width: 1500, height: 1000 } });
page.setDefaultTimeout(T);
page.on('console', (m) => { if (m.type() === 'error') console.log('  [browser]', m.text().slice(0, 200)); });

const editor = page.locator('.editor-group-container.active .monaco-editor').first();
const problems = page.locator('.markers-panel');
const problemRows = page.locator('.markers-panel .monaco-list-row');

async function openFile(name) {
  step = `open ${name}`;
  const row = page.locator('.explorer-folders-view .monaco-list-row', { hasText: name });
  await row.first().waitFor();
  await row.first().click();
  await page.locator('.tabs-container .tab.active', { hasText: name }).waitFor();
  await editor.locator('.view-lines .view-line').first().waitFor();
  log(`${name} open`);
}

async function openProblems() {
  if (await problems.isVisible()) return;
  await page.locator('#status\\.problems').click();
  await problems.waitFor();
}

/** The squiggle's box, once the server's diagnostic is shown in the active editor. */
async function squiggle(code) {
  step = `${code}: squiggle`;
  const s = editor.locator('.squiggly-error').first();
  await s.waitFor();
  const box = await s.boundingBox();
  if (!box) throw new Error('squiggle has no box');
  return box;
}

async function hoverShows(box, text) {
  const hover = page.locator('.monaco-hover', { hasText: text });
  const end = Date.now() + T;
  // squiggles sit beneath the text layer, so locator.hover() is blocked: move the mouse instead
  while (Date.now() < end) {
    await page.mouse.move(box.x + box.width / 2, box.y + 200);
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
    try {
      await hover.first().waitFor({ timeout: 8000 });
      return (await hover.first().innerText()).replace(/\s+/g, ' ');
    } catch {
      /* the hover can open before the server answers; move away and back */
    }
  }
  throw new Error(`no hover containing ${JSON.stringify(text)}`);
}

async function runCase(c) {
  const original = readFileSync(join(workspace, c.file), 'utf8');
  const expected = readFileSync(join(expectedDir, c.file.replace(/\.py$/, '.fixed.py.txt')), 'utf8');
  const lines = original.split('\n');
  const lineNo = lines.findIndex((l) => l.includes(c.covered));
  const col = lines[lineNo].indexOf(c.covered); // JS strings index UTF-16 units, as VS Code counts
  await openFile(c.file);

  const box = await squiggle(c.code);
  pass(`${c.code}.squiggle`);

  step = `${c.code}: Problems entry`;
  await openProblems();
  const row = problemRows.filter({ hasText: c.message });
  await row.first().waitFor();
  const rowText = (await row.first().innerText()).replace(/\s+/g, ' ');
  const where = `[Ln ${lineNo + 1}, Col ${col + 1}]`;
  if (!rowText.includes(c.code) || !rowText.includes(where) || !rowText.includes('pallas-ls')) {
    throw new Error(`Problems entry ${JSON.stringify(rowText)} lacks ${c.code}, pallas-ls or ${where}`);
  }
  pass(`${c.code}.problem`, rowText);

  step = `${c.code}: hover`;
  const hoverText = await hoverShows(box, c.hover);
  pass(`${c.code}.hover`, hoverText.slice(0, 160));
  await page.keyboard.press('Escape');

  step = `${c.code}: quick fix`;
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.keyboard.press('Control+Period');
  const action = page.locator('.action-widget .monaco-list-row', { hasText: c.fixTitle });
  await action.first().waitFor();
  const titles = (await page.locator('.action-widget').first().innerText()).replace(/\s+/g, ' ');
  log(`code actions: ${titles}`);
  // a pointer-block layer covers the menu: choose with the keyboard, as a user of Ctrl+. would
  const rows = await page.locator('.action-widget .monaco-list-row.action').count();
  for (let i = 0; i <= rows; i++) {
    const focused = await page.locator('.action-widget .monaco-list-row.action.focused').first().getAttribute('aria-label');
    if (focused && focused.includes(c.fixTitle)) break;
    if (i === rows) throw new Error(`could not focus the code action ${JSON.stringify(c.fixTitle)}`);
    await page.keyboard.press('ArrowDown');
  }
  await page.keyboard.press('Enter');
  pass(`${c.code}.fix.applied`, c.fixTitle);

  step = `${c.code}: problem cleared`;
  // Markers only go away when the server publishes new diagnostics for the edited text.
  await problemRows.filter({ hasText: c.file }).first().waitFor({ state: 'detached' });
  await editor.locator('.squiggly-error').first().waitFor({ state: 'detached' });
  pass(`${c.code}.cleared`);

  step = `${c.code}: saved text`;
  await page.keyboard.press('Control+S');
  const onDisk = await until(`${c.file} saved with the fix`, () => {
    const text = readFileSync(join(workspace, c.file), 'utf8');
    return text !== original ? text : null;
  });
  if (onDisk !== expected) {
    throw new Error(`${c.file} after the fix:\n${onDisk}\n--- expected:\n${expected}`);
  }
  pass(`${c.code}.fix.text`);
}

let ok = false;
try {
  const settingsAtStart = JSON.parse(readFileSync(SETTINGS, 'utf8'));
  step = 'workbench';
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor();
  log('workbench visible');

  // The clean file is opened first, so the server has analysed it before the others.
  await openFile(CLEAN);
  step = 'extension activated (output channel)';
  const channelLog = await until('the "pallas-ls" output channel log', () =>
    findFiles(logsDir, (n) => n.includes('pallas-ls') && n.endsWith('.log')).find((p) =>
      readFileSync(p, 'utf8').includes('Server command')));
  pass('output.channel', channelLog);

  for (const c of CASES) {
    await runCase(c);
  }

  step = 'negative control';
  await openFile(CLEAN);
  await openProblems();
  // clean_kernel.py was opened (and analysed) before both other files, whose problems have since
  // been published and cleared: nothing may be left, and nothing shown for the clean file.
  if ((await problemRows.count()) !== 0) {
    throw new Error(`Problems not empty: ${(await problems.innerText()).replace(/\s+/g, ' ')}`);
  }
  if ((await editor.locator('.squiggly-error, .squiggly-warning, .squiggly-info').count()) !== 0) {
    throw new Error(`${CLEAN} shows a squiggle`);
  }
  pass('clean.no-problems');

  // Proof that the server does analyse this file: type a PAL001 into it, see it, delete it, see it go.
  step = 'clean file: typed finding';
  const cleanLines = readFileSync(join(workspace, CLEAN), 'utf8').split('\n');
  const anchor = 'dimension_semantics=("parallel",)';
  const at = cleanLines.findIndex((l) => l.includes(anchor));
  const atCol = cleanLines[at].indexOf(anchor) + anchor.length;
  const typed = ', opt_level=2';
  const typeFinding = async () => {
    await editor.locator('.view-lines').first().click();
    await page.keyboard.press('Control+G');
    await page.keyboard.type(`${at + 1}:${atCol + 1}`);
    await page.keyboard.press('Enter');
    await page.keyboard.type(typed, { delay: 20 });
    await page.keyboard.press('Escape');
  };
  await typeFinding();
  await problemRows.filter({ hasText: 'PAL001' }).first().waitFor();
  await editor.locator('.squiggly-error').first().waitFor();
  pass('clean.typed.flagged');
  // Settings reach the server when they change (workspace/didChangeConfiguration).
  step = 'setting pallas-ls.ignore applied';
  await editSettings((s) => { s['pallas-ls.ignore'] = ['PAL001']; });
  await problemRows.filter({ hasText: CLEAN }).first().waitFor({ state: 'detached' });
  pass('settings.ignore.applied');
  step = 'setting pallas-ls.ignore removed';
  await editSettings((s) => { delete s['pallas-ls.ignore']; });
  await problemRows.filter({ hasText: 'PAL001' }).first().waitFor();
  pass('settings.ignore.removed');

  step = 'clean file: typed finding removed';
  for (let i = 0; i < typed.length; i++) await page.keyboard.press('Backspace');
  await problemRows.filter({ hasText: CLEAN }).first().waitFor({ state: 'detached' });
  pass('clean.typed.cleared');

  // An interpreter without pallas-ls: the server restarts and one notification says how to install it.
  step = 'interpreter without pallas-ls';
  await editSettings((s) => { s['pallas-ls.interpreter'] = [BARE_PYTHON]; });
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'pip install pallas-ls' });
  await toast.first().waitFor();
  await until('the restart to be logged', () =>
    readFileSync(channelLog, 'utf8').includes('is not installed for the Python interpreter'));
  const toasts = await page.locator('.notifications-toasts .notification-toast').allInnerTexts();
  const ours = toasts.filter((t) => t.includes('pallas-ls'));
  if (ours.length !== 1) throw new Error(`expected one pallas-ls notification, got ${JSON.stringify(ours)}`);
  pass('not-installed.notification', ours[0].replace(/\s+/g, ' '));

  // pallas-ls.path names the venv's pallas-ls executable: it wins over the (bare) interpreter.
  step = 'pallas-ls.path setting';
  await editSettings((s) => { s['pallas-ls.path'] = SERVER_EXE; });
  await until('a server started from pallas-ls.path', () => {
    const text = readFileSync(channelLog, 'utf8');
    const at = text.lastIndexOf(`Server command (path-setting): ${SERVER_EXE} serve`);
    return at >= 0 && text.indexOf('Server started', at) > at;
  });
  pass('path.setting');

  step = 'restart command';
  await page.keyboard.press('Control+Shift+P');
  await page.locator('.quick-input-widget input').fill('>pallas-ls: Restart Server');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Restart Server' }).first().waitFor();
  await page.keyboard.press('Enter');
  await until('a server start after the restart command', () => {
    const text = readFileSync(channelLog, 'utf8');
    const at = text.lastIndexOf('Restart requested');
    return at >= 0 && text.indexOf('Server started', at) > at;
  });
  pass('restart.command');

  step = 'diagnostics after the restart';
  await openFile(CLEAN);
  await typeFinding();
  await problemRows.filter({ hasText: 'PAL001' }).first().waitFor();
  pass('restart.diagnostics');
  ok = true;
} catch (e) {
  log(`FAILED at step "${step}": ${String(e.message).split('\n').slice(0, 12).join('\n')}`);
  const shot = join(out, 'failure.png');
  await page.screenshot({ path: shot }).catch(() => undefined);
  log(`screenshot: ${shot}`);
  const notes = await page.locator('.notifications-toasts .notification-list-item').allInnerTexts().catch(() => []);
  if (notes.length) log(`notifications: ${JSON.stringify(notes)}`);
} finally {
  await browser.close();
}
log(`checks passed: ${checks.join(', ')}`);
log(ok ? 'RESULT PASS' : 'RESULT FAIL');
process.exit(ok ? 0 : 1);
