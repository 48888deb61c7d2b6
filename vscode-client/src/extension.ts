import { spawn } from 'child_process';
import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  ErrorAction,
  ErrorHandlerResult,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import {
  RESTART_SETTINGS,
  RestartBudget,
  SECTION,
  ServerCommand,
  StartProblem,
  classifyImportCheck,
  formatCommand,
  importCheckCommand,
  problemMessage,
  resolveServerCommand,
  serverSettings,
} from './resolve';

const IMPORT_CHECK_TIMEOUT_MS = 60_000;

/** The subset of the ms-python.python extension API used here (it is optional). */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
    resolveEnvironment?(env: { id: string; path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
  };
}

/**
 * Client errors are logged to the output channel; at most one notification is shown per start
 * attempt, so a server that cannot start produces one clear message instead of a stack of them.
 */
class PallasClient extends LanguageClient {
  constructor(
    id: string,
    name: string,
    serverOptions: ServerOptions,
    clientOptions: LanguageClientOptions,
    private readonly notifyOnce: (message: string) => void,
  ) {
    super(id, name, serverOptions, clientOptions);
  }

  override error(message: string, data?: unknown, showNotification: boolean | 'force' = true): void {
    super.error(message, data, false);
    if (showNotification) {
      this.notifyOnce(message);
    }
  }
}

class Controller implements vscode.Disposable {
  private client: PallasClient | undefined;
  private queue: Promise<void> = Promise.resolve();
  private notified = false;
  private readonly budget = new RestartBudget();
  private pythonApi: PythonExtensionApi | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly output: vscode.LogOutputChannel) {}

  /** Runs start/stop/restart one after another, never interleaved. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(task, task).catch((e: unknown) => {
      this.output.error(`pallas-ls: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
    });
    return this.queue;
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  dispose(): void {
    this.disposables.forEach((d) => d.dispose());
  }

  private folder(): vscode.WorkspaceFolder | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    return (active && vscode.workspace.getWorkspaceFolder(active)) ?? vscode.workspace.workspaceFolders?.[0];
  }

  private showProblem(message: string, withSettings: boolean): void {
    if (this.notified) {
      return;
    }
    this.notified = true;
    const actions = withSettings ? ['Open Settings', 'Show Output'] : ['Show Output'];
    void vscode.window.showErrorMessage(message, ...actions).then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'pallas-ls.interpreter');
      } else if (choice === 'Show Output') {
        this.output.show(true);
      }
    });
  }

  private async pythonExtensionInterpreter(resource: vscode.Uri | undefined): Promise<string[] | undefined> {
    const ext = vscode.extensions.getExtension<PythonExtensionApi>('ms-python.python');
    if (!ext) {
      return undefined;
    }
    try {
      const api = ext.isActive ? ext.exports : await ext.activate();
      if (api !== this.pythonApi) {
        this.pythonApi = api;
        const onChange = api?.environments?.onDidChangeActiveEnvironmentPath;
        if (onChange) {
          this.disposables.push(
            onChange(() => {
              const cfg = vscode.workspace.getConfiguration(SECTION, this.folder()?.uri);
              const pinned = cfg.get<unknown>('path') || cfg.get<unknown>('interpreter');
              if (!pinned || (Array.isArray(pinned) && pinned.length === 0)) {
                this.output.info('Python extension: active interpreter changed; restarting the server');
                void this.restart();
              }
            }),
          );
        }
      }
      const exec = api?.settings?.getExecutionDetails(resource).execCommand;
      if (exec && exec.length > 0) {
        return exec;
      }
      const env = api?.environments?.getActiveEnvironmentPath(resource);
      if (env) {
        const resolved = await api?.environments?.resolveEnvironment?.(env);
        const exe = resolved?.executable?.uri?.fsPath;
        return [exe ?? env.path];
      }
    } catch (e) {
      this.output.warn(`Could not ask the Python extension for its interpreter: ${String(e)}`);
    }
    return undefined;
  }

  private async serverCommand(): Promise<ServerCommand> {
    const folder = this.folder();
    const cfg = vscode.workspace.getConfiguration(SECTION, folder?.uri);
    const pathSetting = cfg.get<unknown>('path');
    const interpreter = cfg.get<unknown>('interpreter');
    const needsPythonExt =
      !(typeof pathSetting === 'string' && pathSetting.trim()) &&
      !(typeof interpreter === 'string' ? interpreter.trim() : Array.isArray(interpreter) && interpreter.length > 0);
    return resolveServerCommand({
      path: pathSetting,
      interpreter,
      pythonExtension: needsPythonExt ? await this.pythonExtensionInterpreter(folder?.uri) : undefined,
      workspaceFolder: folder?.uri.fsPath,
    });
  }

  /** Runs `<python> -c "import pallas_ls"` (or checks `<path>` can be spawned) before starting. */
  private precheck(cmd: ServerCommand, cwd: string | undefined): Promise<StartProblem | undefined> {
    const probe =
      cmd.source === 'path-setting' ? { command: cmd.command, args: ['--help'] } : importCheckCommand(cmd.python);
    return new Promise((resolve) => {
      let stderr = '';
      let spawnErrorCode: string | undefined;
      const child = spawn(probe.command, probe.args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], timeout: IMPORT_CHECK_TIMEOUT_MS });
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('error', (err: NodeJS.ErrnoException) => {
        spawnErrorCode = err.code ?? 'spawn error';
      });
      child.on('close', (exitCode) => {
        if (cmd.source === 'path-setting') {
          // Only "cannot be run at all" is a problem here; the exit status of --help is not.
          resolve(
            spawnErrorCode === 'ENOENT' || spawnErrorCode === 'EACCES'
              ? { kind: 'executable-not-found', executable: cmd.command }
              : undefined,
          );
          return;
        }
        if (stderr.trim()) {
          this.output.info(`import check stderr:\n${stderr.trim()}`);
        }
        resolve(classifyImportCheck(cmd.python, { spawnErrorCode, exitCode, stderr }));
      });
    });
  }

  private async doStart(): Promise<void> {
    this.notified = false;
    this.budget.reset();
    const cmd = await this.serverCommand();
    const cwd = this.folder()?.uri.fsPath;
    this.output.info(`Server command (${cmd.source}): ${formatCommand([cmd.command, ...cmd.args])}`);
    const problem = await this.precheck(cmd, cwd);
    if (problem) {
      const message = problemMessage(problem);
      this.output.error(message);
      this.showProblem(message, true);
      return;
    }
    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      transport: TransportKind.stdio,
      options: { cwd, env: { ...process.env, PYTHONUNBUFFERED: '1' } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: () => serverSettings((key) => vscode.workspace.getConfiguration(SECTION, this.folder()?.uri).get(key)),
      // didChangeConfiguration on every change of the section; workspace/configuration is answered by the client.
      synchronize: { configurationSection: SECTION },
      initializationFailedHandler: (error) => {
        this.output.error(`Server initialization failed: ${String(error)}`);
        return false;
      },
      errorHandler: {
        error: (error, _message, count): ErrorHandlerResult => {
          this.output.error(`Connection error (${count ?? 0}): ${error.message}`);
          return { action: (count ?? 0) <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
        },
        closed: (): CloseHandlerResult => {
          if (this.budget.allow(Date.now())) {
            this.output.warn('The pallas-ls server exited; restarting it');
            return { action: CloseAction.Restart, handled: true };
          }
          const message =
            'The pallas-ls server keeps exiting and will not be restarted. See the "pallas-ls" output for its error, ' +
            'then run "pallas-ls: Restart Server".';
          this.output.error(message);
          this.showProblem(message, false);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client: PallasClient = new PallasClient(SECTION, 'pallas-ls', serverOptions, clientOptions, (message) => {
      // Errors of a client that is being stopped (e.g. a notification cut off by a restart) are
      // only logged; a failed start is reported by the catch below.
      if (this.client === client && client.state === State.Running) {
        this.showProblem(`pallas-ls: ${message} See the "pallas-ls" output for details.`, false);
      }
    });
    this.client = client;
    try {
      await client.start();
      this.output.info('Server started');
    } catch (e) {
      // PallasClient.error already logged it and showed the one notification.
      this.output.error(`Server failed to start: ${e instanceof Error ? e.message : String(e)}`);
      this.showProblem(
        `pallas-ls: the server did not start (${formatCommand([cmd.command, ...cmd.args])}). See the "pallas-ls" output for its error.`,
        true,
      );
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        if (client.needsStop()) {
          await client.stop(5000);
        }
      } catch (e) {
        this.output.warn(`Stopping the server: ${String(e)}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }
}

let controller: Controller | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel('pallas-ls', { log: true });
  controller = new Controller(output);
  context.subscriptions.push(
    output,
    controller,
    vscode.commands.registerCommand('pallas-ls.restart', async () => {
      output.info('Restart requested');
      await controller?.restart();
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (RESTART_SETTINGS.some((key) => event.affectsConfiguration(key))) {
        output.info('Interpreter or path setting changed; restarting the server');
        void controller?.restart();
      }
    }),
  );
  await controller.start();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
