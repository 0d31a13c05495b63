// The session's task list as a checklist above the input box: the model's latest TodoWrite
// list as the server gives it (`SessionView.todos`), each item pending, in progress (said
// in its active form) or completed. Folded to its count and current item when closed.
import { collapsed, h } from "./dom";
import type { TodoEntry } from "./wire";

const MARKS: { [status in TodoEntry["status"]]: { mark: string; said: string } } = {
  pending: { mark: "○", said: "pending" },
  in_progress: { mark: "◐", said: "in progress" },
  completed: { mark: "✓", said: "completed" },
};

export class TodoChecklist {
  readonly el = h("div", { class: "baton-todos-slot" });
  private open = true; // the user's choice, kept while the view lives

  constructor() {
    this.el.hidden = true;
  }

  render(todos: readonly TodoEntry[] | undefined): void {
    if (!todos || todos.length === 0) {
      this.el.hidden = true;
      this.el.replaceChildren();
      return;
    }
    const done = todos.filter((t) => t.status === "completed").length;
    const now = todos.find((t) => t.status === "in_progress");
    const details = collapsed(
      "baton-todos",
      [
        h("span", {}, "Tasks"),
        h("span", { class: "baton-meta" }, ` ${done}/${todos.length} done`),
        now ? h("span", { class: "baton-todo-now" }, ` · ${now.activeForm || now.content}`) : null,
      ],
      h("ul", { class: "baton-todo-list", "aria-label": "Task list" }, ...todos.map(item)),
    );
    details.open = this.open;
    details.addEventListener("toggle", () => (this.open = details.open));
    this.el.replaceChildren(details);
    this.el.hidden = false;
  }
}

function item(todo: TodoEntry): HTMLElement {
  const { mark, said } = MARKS[todo.status];
  const text = todo.status === "in_progress" && todo.activeForm ? todo.activeForm : todo.content;
  return h(
    "li",
    { class: `baton-todo status-${todo.status}`, title: todo.content },
    h("span", { class: "baton-todo-mark", "aria-hidden": "true" }, mark),
    h("span", { class: "baton-todo-text" }, text),
    h("span", { class: "baton-visually-hidden" }, ` (${said})`),
  );
}
