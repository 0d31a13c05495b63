/** The interpreter the Python extension has selected, read through its public API. */
import * as vscode from "vscode";

interface PythonEnvironmentsApi {
  getActiveEnvironmentPath?(resource?: vscode.Uri): { path: string } | undefined;
  resolveEnvironment?(env: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
}

interface PythonExtensionApi {
  environments?: PythonEnvironmentsApi;
  settings?: { getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } };
}

const PYTHON_EXTENSION = "ms-python.python";

async function pythonApi(): Promise<PythonExtensionApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (extension === undefined) {
    return undefined;
  }
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch {
    return undefined; // a Python extension that fails to start is the same as none
  }
}

/** The selected interpreter's executable, or undefined when there is none to ask. */
export async function selectedInterpreter(log: vscode.LogOutputChannel): Promise<string | undefined> {
  const api = await pythonApi();
  if (api === undefined) {
    return undefined;
  }
  const resource = vscode.workspace.workspaceFolders?.[0]?.uri;
  try {
    const active = api.environments?.getActiveEnvironmentPath?.(resource);
    if (active !== undefined) {
      const resolved = await api.environments?.resolveEnvironment?.(active);
      const executable = resolved?.executable?.uri?.fsPath;
      if (executable) {
        return executable;
      }
    }
    return api.settings?.getExecutionDetails?.(resource)?.execCommand?.[0] || undefined;
  } catch (error) {
    log.warn(`could not read the Python extension's interpreter: ${String(error)}`);
    return undefined;
  }
}

/** Fires when the user selects another interpreter (nothing when the extension is absent). */
export async function onInterpreterChange(listener: () => void): Promise<vscode.Disposable> {
  const api = await pythonApi();
  const event = api?.environments?.onDidChangeActiveEnvironmentPath;
  return event !== undefined ? event(listener) : new vscode.Disposable(() => undefined);
}
