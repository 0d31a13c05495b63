/** "Baton: Switch Model": the models `baton/models` lists, each with its window, or an id typed in. */
import * as vscode from "vscode";
import type { ModelCatalog } from "./protocol";
import type { BatonRpc } from "./rpc";

interface ModelItem extends vscode.QuickPickItem {
  model?: string;
}

const TITLE = "Baton: Switch Model";

/** The model chosen (undefined: none). Without a list (the request failed) an id is typed in. */
export async function chooseModel(rpc: Pick<BatonRpc, "listModels">, sessionId: string, currentModel: string): Promise<string | undefined> {
  const catalog: ModelCatalog | undefined = await rpc.listModels(sessionId).catch(() => undefined);
  if (catalog !== undefined) {
    const items: ModelItem[] = catalog.models.map((m) => ({
      label: m.id,
      description: `${m.contextWindow.toLocaleString("en-US")}-token window${m.current ? " (current)" : ""}`,
      detail: m.displayName !== m.id ? m.displayName : undefined,
      model: m.id,
    }));
    items.push({ label: "Another model id…", alwaysShow: true });
    const choice = await vscode.window.showQuickPick(items, {
      title: TITLE,
      placeHolder: catalog.source === "api" ? "The Anthropic Models API's models" : `The configured models (${catalog.reason ?? "no list from the API"})`,
      matchOnDescription: true,
      matchOnDetail: true,
    });
    if (choice === undefined) return undefined;
    if (choice.model !== undefined) return choice.model;
  }
  const typed = await vscode.window.showInputBox({
    title: TITLE,
    prompt: "The model this conversation's replies come from; its context budget is re-evaluated at once.",
    value: currentModel,
    validateInput: (value) => (value.trim() === "" ? "A model id, e.g. claude-sonnet-4-5" : undefined),
  });
  return typed === undefined || typed.trim() === "" ? undefined : typed.trim();
}
