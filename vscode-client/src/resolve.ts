// Pure logic of the extension: how the server command is chosen, what the server is sent,
// and how start-up failures are explained. No `vscode` import, so `node --test` can run it.

import * as os from 'os';
import * as path from 'path';

export const SECTION = 'pallas-ls';
export const DEFAULT_PYTHON = 'python3';
export const INSTALL_PACKAGE = 'pallas-ls';

/** Settings that change which process runs: a change restarts the server. */
export const RESTART_SETTINGS = [`${SECTION}.interpreter`, `${SECTION}.path`];

/** Where the server command came from, shown in the output channel and in error messages. */
export type CommandSource = 'path-setting' | 'interpreter-setting' | 'python-extension' | 'default';

export interface ServerCommand {
  command: string;
  args: string[];
  source: CommandSource;
  /** The interpreter command line (empty when `pallas-ls.path` names an executable). */
  python: string[];
}

export interface ResolveInputs {
  /** `pallas-ls.path`: a pallas-ls executable. */
  path?: unknown;
  /** `pallas-ls.interpreter`: a string or an array of strings. */
  interpreter?: unknown;
  /** The Python extension's active interpreter command line, when that extension is installed. */
  pythonExtension?: string[] | undefined;
  /** Folder used for `${workspaceFolder}` and for relative paths. */
  workspaceFolder?: string | undefined;
  env?: NodeJS.ProcessEnv;
  home?: string;
}

/** Expands `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~`. */
export function expandVariables(
  value: string,
  workspaceFolder: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  home: string = os.homedir(),
): string {
  let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
    if (name === 'workspaceFolder') {
      return workspaceFolder ?? whole;
    }
    if (name === 'userHome') {
      return home;
    }
    return env[envName as string] ?? '';
  });
  if (out === '~' || out.startsWith('~/')) {
    out = home + out.slice(1);
  }
  return out;
}

/** A path with a directory part is made absolute against the workspace folder; bare names stay for PATH lookup. */
function absolutise(value: string, workspaceFolder: string | undefined): string {
  if (path.isAbsolute(value) || !workspaceFolder || !/[\\/]/.test(value)) {
    return value;
  }
  return path.resolve(workspaceFolder, value);
}

/**
 * Normalises the `pallas-ls.interpreter` setting: a string is one executable, an array is a
 * command line. Empty strings are dropped; an empty result means "not set".
 */
export function normaliseInterpreter(
  value: unknown,
  workspaceFolder?: string,
  env?: NodeJS.ProcessEnv,
  home?: string,
): string[] | undefined {
  let parts: string[];
  if (typeof value === 'string') {
    parts = [value];
  } else if (Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    parts = value as string[];
  } else {
    return undefined;
  }
  parts = parts.map((p) => p.trim()).filter((p) => p.length > 0);
  if (parts.length === 0) {
    return undefined;
  }
  const expanded = parts.map((p) => expandVariables(p, workspaceFolder, env, home));
  expanded[0] = absolutise(expanded[0], workspaceFolder);
  return expanded;
}

/**
 * Chooses how to start the server: `pallas-ls.path` (`<path> serve`), else
 * `<python> -m pallas_ls serve` with `<python>` from `pallas-ls.interpreter`, the Python
 * extension's active interpreter, or `python3`, in that order.
 */
export function resolveServerCommand(inputs: ResolveInputs): ServerCommand {
  const { workspaceFolder, env, home } = inputs;
  if (typeof inputs.path === 'string' && inputs.path.trim() !== '') {
    const exe = absolutise(expandVariables(inputs.path.trim(), workspaceFolder, env, home), workspaceFolder);
    return { command: exe, args: ['serve'], source: 'path-setting', python: [] };
  }
  let python = normaliseInterpreter(inputs.interpreter, workspaceFolder, env, home);
  let source: CommandSource = 'interpreter-setting';
  if (!python) {
    python = normaliseInterpreter(inputs.pythonExtension ?? [], workspaceFolder, env, home);
    source = 'python-extension';
  }
  if (!python) {
    python = [DEFAULT_PYTHON];
    source = 'default';
  }
  return {
    command: python[0],
    args: [...python.slice(1), '-m', 'pallas_ls', 'serve'],
    source,
    python,
  };
}

/** The command that checks the package is importable before the server is started. */
export function importCheckCommand(python: string[]): { command: string; args: string[] } {
  return { command: python[0], args: [...python.slice(1), '-c', 'import pallas_ls'] };
}

/** Quotes a command line for display (POSIX shell style; only when needed). */
export function formatCommand(parts: string[]): string {
  return parts.map((p) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`)).join(' ');
}

export type StartProblem =
  | { kind: 'not-installed'; python: string[] }
  | { kind: 'interpreter-not-found'; python: string[] }
  | { kind: 'executable-not-found'; executable: string }
  | { kind: 'import-failed'; python: string[]; detail: string };

/** Classifies the result of the import check (`python -c "import pallas_ls"`). */
export function classifyImportCheck(
  python: string[],
  result: { spawnErrorCode?: string; exitCode: number | null; stderr: string },
): StartProblem | undefined {
  if (result.spawnErrorCode === 'ENOENT' || result.spawnErrorCode === 'EACCES') {
    return { kind: 'interpreter-not-found', python };
  }
  if (result.spawnErrorCode) {
    return { kind: 'import-failed', python, detail: result.spawnErrorCode };
  }
  if (result.exitCode === 0) {
    return undefined;
  }
  if (/No module named '?pallas_ls'?/.test(result.stderr)) {
    return { kind: 'not-installed', python };
  }
  const lastLine = result.stderr.trim().split(/\r?\n/).pop() ?? '';
  return { kind: 'import-failed', python, detail: lastLine || `exit status ${result.exitCode}` };
}

/** One user-facing sentence (or two) per problem: what is wrong and how to fix it. */
export function problemMessage(problem: StartProblem): string {
  switch (problem.kind) {
    case 'not-installed':
      return (
        `pallas-ls is not installed for the Python interpreter ${formatCommand(problem.python)}. ` +
        `Install it with \`${formatCommand([...problem.python, '-m', 'pip', 'install', INSTALL_PACKAGE])}\` ` +
        `(pip install ${INSTALL_PACKAGE} into that interpreter), or choose another interpreter with the ` +
        `"pallas-ls.interpreter" setting, then run "pallas-ls: Restart Server".`
      );
    case 'interpreter-not-found':
      return (
        `pallas-ls could not run the Python interpreter ${formatCommand(problem.python)}. ` +
        `Set "pallas-ls.interpreter" to a Python that has pallas-ls installed (pip install ${INSTALL_PACKAGE}).`
      );
    case 'executable-not-found':
      return (
        `pallas-ls could not run "${problem.executable}" (the "pallas-ls.path" setting). ` +
        `Fix the path, or clear it to use a Python interpreter with pallas-ls installed (pip install ${INSTALL_PACKAGE}).`
      );
    case 'import-failed':
      return (
        `pallas-ls failed to load in ${formatCommand(problem.python)}: ${problem.detail}. ` +
        `Reinstall it with \`${formatCommand([...problem.python, '-m', 'pip', 'install', '--upgrade', INSTALL_PACKAGE])}\`; ` +
        `details are in the "pallas-ls" output.`
      );
  }
}

export interface ServerSettings {
  select: string[];
  ignore: string[];
  /** Empty when not set, as in the `pallas-ls` configuration section the server also reads. */
  jaxVersion: string;
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') {
    return value.split(/[\s,]+/).filter((s) => s.length > 0);
  }
  if (Array.isArray(value)) {
    return value.filter((v): v is string => typeof v === 'string').map((s) => s.trim()).filter((s) => s.length > 0);
  }
  return [];
}

/** The initialization options the server receives (the same keys as the `pallas-ls` section). */
export function serverSettings(get: (key: string) => unknown): ServerSettings {
  const jax = get('jaxVersion');
  return {
    select: stringList(get('select')),
    ignore: stringList(get('ignore')),
    jaxVersion: typeof jax === 'string' ? jax.trim() : '',
  };
}

/**
 * Restart policy for a server that keeps exiting: allow `maxRestarts` restarts within
 * `windowMs`, then give up (and tell the user once).
 */
export class RestartBudget {
  private readonly times: number[] = [];

  constructor(
    private readonly maxRestarts = 3,
    private readonly windowMs = 3 * 60 * 1000,
  ) {}

  /** Records a crash at `now`; true if another restart is allowed. */
  allow(now: number): boolean {
    this.times.push(now);
    while (this.times.length > 0 && now - this.times[0] > this.windowMs) {
      this.times.shift();
    }
    return this.times.length <= this.maxRestarts;
  }

  reset(): void {
    this.times.length = 0;
  }
}
