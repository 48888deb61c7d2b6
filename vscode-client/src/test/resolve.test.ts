import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  RestartBudget,
  classifyImportCheck,
  expandVariables,
  formatCommand,
  importCheckCommand,
  normaliseInterpreter,
  problemMessage,
  resolveServerCommand,
  serverSettings,
} from '../resolve';

const env = { VENV: '/opt/venv' };
const home = '/home/u';

describe('resolveServerCommand', () => {
  it('uses pallas-ls.path as `<path> serve` ahead of every interpreter', () => {
    const cmd = resolveServerCommand({ path: '/usr/local/bin/pallas-ls', interpreter: ['/x/python'], pythonExtension: ['/y/python'] });
    assert.deepEqual(cmd, { command: '/usr/local/bin/pallas-ls', args: ['serve'], source: 'path-setting', python: [] });
  });

  it('runs `<interpreter> -m pallas_ls serve` from the interpreter setting (string)', () => {
    const cmd = resolveServerCommand({ interpreter: '/w/.venv/bin/python', pythonExtension: ['/y/python'] });
    assert.equal(cmd.source, 'interpreter-setting');
    assert.equal(cmd.command, '/w/.venv/bin/python');
    assert.deepEqual(cmd.args, ['-m', 'pallas_ls', 'serve']);
  });

  it('keeps extra arguments of an interpreter command line before -m', () => {
    const cmd = resolveServerCommand({ interpreter: ['conda', 'run', '-n', 'jax', 'python'] });
    assert.equal(cmd.command, 'conda');
    assert.deepEqual(cmd.args, ['run', '-n', 'jax', 'python', '-m', 'pallas_ls', 'serve']);
    assert.deepEqual(cmd.python, ['conda', 'run', '-n', 'jax', 'python']);
  });

  it('falls back to the Python extension, then python3', () => {
    const fromExt = resolveServerCommand({ interpreter: [], pythonExtension: ['/envs/a/bin/python'] });
    assert.equal(fromExt.source, 'python-extension');
    assert.equal(fromExt.command, '/envs/a/bin/python');
    const fallback = resolveServerCommand({ interpreter: [], pythonExtension: undefined });
    assert.deepEqual(fallback, { command: 'python3', args: ['-m', 'pallas_ls', 'serve'], source: 'default', python: ['python3'] });
  });

  it('treats blank and malformed settings as unset', () => {
    assert.equal(resolveServerCommand({ path: '   ', interpreter: ['  ', ''] }).source, 'default');
    assert.equal(resolveServerCommand({ path: 42, interpreter: [1, 2] }).source, 'default');
    assert.equal(resolveServerCommand({ interpreter: { python: 'x' } }).source, 'default');
  });

  it('expands variables and resolves relative paths against the workspace folder', () => {
    const cmd = resolveServerCommand({ interpreter: ['${workspaceFolder}/.venv/bin/python'], workspaceFolder: '/w', env, home });
    assert.equal(cmd.command, '/w/.venv/bin/python');
    assert.equal(resolveServerCommand({ interpreter: '.venv/bin/python', workspaceFolder: '/w' }).command, '/w/.venv/bin/python');
    assert.equal(resolveServerCommand({ interpreter: 'python3.12', workspaceFolder: '/w' }).command, 'python3.12');
    assert.equal(resolveServerCommand({ path: '~/bin/pallas-ls', home }).command, '/home/u/bin/pallas-ls');
    assert.equal(resolveServerCommand({ path: '${env:VENV}/bin/pallas-ls', env }).command, '/opt/venv/bin/pallas-ls');
  });
});

describe('expandVariables / normaliseInterpreter', () => {
  it('leaves ${workspaceFolder} alone when there is no folder and empties unknown env vars', () => {
    assert.equal(expandVariables('${workspaceFolder}/p', undefined, env, home), '${workspaceFolder}/p');
    assert.equal(expandVariables('${env:NOPE}x', '/w', env, home), 'x');
    assert.equal(expandVariables('${userHome}/p', '/w', env, home), '/home/u/p');
  });

  it('returns undefined for empty settings and a list for strings', () => {
    assert.equal(normaliseInterpreter([]), undefined);
    assert.equal(normaliseInterpreter(''), undefined);
    assert.equal(normaliseInterpreter(undefined), undefined);
    assert.deepEqual(normaliseInterpreter(' /p/python '), ['/p/python']);
  });
});

describe('import check and messages', () => {
  const py = ['/w/.venv/bin/python'];

  it('builds `python -c "import pallas_ls"`', () => {
    assert.deepEqual(importCheckCommand(['conda', 'run', 'python']), { command: 'conda', args: ['run', 'python', '-c', 'import pallas_ls'] });
  });

  it('classifies the outcomes', () => {
    assert.equal(classifyImportCheck(py, { exitCode: 0, stderr: '' }), undefined);
    assert.deepEqual(classifyImportCheck(py, { exitCode: 1, stderr: "Traceback...\nModuleNotFoundError: No module named 'pallas_ls'\n" }), {
      kind: 'not-installed',
      python: py,
    });
    assert.deepEqual(classifyImportCheck(py, { spawnErrorCode: 'ENOENT', exitCode: null, stderr: '' }), { kind: 'interpreter-not-found', python: py });
    assert.deepEqual(classifyImportCheck(py, { exitCode: 1, stderr: 'Traceback\nImportError: cannot import name x\n' }), {
      kind: 'import-failed',
      python: py,
      detail: 'ImportError: cannot import name x',
    });
  });

  it('says how to install the package into that interpreter', () => {
    const msg = problemMessage({ kind: 'not-installed', python: py });
    assert.match(msg, /pip install pallas-ls/);
    assert.ok(msg.includes('/w/.venv/bin/python -m pip install pallas-ls'), msg);
    assert.match(problemMessage({ kind: 'executable-not-found', executable: '/nope' }), /"\/nope".*pallas-ls\.path/);
  });

  it('quotes only what needs quoting', () => {
    assert.equal(formatCommand(['/a b/python', '-c', "it's"]), `'/a b/python' -c 'it'\\''s'`);
    assert.equal(formatCommand(['python3', '-m', 'pallas_ls']), 'python3 -m pallas_ls');
  });
});

describe('serverSettings', () => {
  it('sends select, ignore and jaxVersion, dropping junk', () => {
    const values: Record<string, unknown> = { select: ['PAL0', '', 3], ignore: 'PAL002, PAL003', jaxVersion: ' 0.6.2 ' };
    assert.deepEqual(serverSettings((k) => values[k]), { select: ['PAL0'], ignore: ['PAL002', 'PAL003'], jaxVersion: '0.6.2' });
    assert.deepEqual(serverSettings(() => undefined), { select: [], ignore: [], jaxVersion: '' });
  });
});

describe('RestartBudget', () => {
  it('allows a few restarts in the window, then refuses until the window passes', () => {
    const budget = new RestartBudget(2, 1000);
    assert.equal(budget.allow(0), true);
    assert.equal(budget.allow(10), true);
    assert.equal(budget.allow(20), false);
    assert.equal(budget.allow(5000), true);
    budget.reset();
    assert.equal(budget.allow(5001), true);
  });
});
