// The chat webview renders what the host sends: a session and its compaction boundary,
// usage, read-only and narrow views, the welcome, both themes; and never trips its CSP.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { MESSAGES, SESSION, USAGE, sessionUpdate } from "./fixture.mjs";
import {
  RESULTS,
  clickMessage,
  env,
  message,
  openView,
  posted,
  showFixture,
  toView,
  useBrowser,
  waitPosted,
} from "./view.mjs";

useBrowser();

test("renders the session: Markdown, highlighted code, collapsed tools, image, summary", async (t) => {
  const page = await openView(t, "dark", { width: 420, height: 1200 });
  await showFixture(page);
  // The first view tells the host nothing is selected (after a reload it may think otherwise).
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selection"), { type: "selection", messageIds: [] });

  // Every message element, in order, with the exact context VS Code's menu reads.
  const contexts = await page.$$eval("article[data-message-id]", (els) =>
    els.map((el) => [el.dataset.messageId, el.dataset.vscodeContext]),
  );
  assert.deepEqual(
    contexts,
    MESSAGES.map((m) => [
      m.id,
      JSON.stringify({ webviewSection: "message", messageId: m.id, preventDefaultContextMenuItems: true, pinned: m.pinned === true }),
    ]),
  );

  const user = message(page, "m_user1");
  assert.equal(await user.locator("strong").textContent(), "negative");
  assert.equal(await user.locator("td.align-right").first().textContent(), "124,000");
  // Raw HTML in a message is text, never markup.
  assert.match(await user.textContent(), /<script>window\.injected = true<\/script>/);
  assert.equal(await page.evaluate(() => window.injected ?? null), null);
  assert.equal(await user.locator(".baton-markdown img, .baton-markdown script").count(), 0);
  // The image is a thumbnail of its base64 source.
  const src = await user.locator("img.baton-thumbnail").getAttribute("src");
  assert.match(src, /^data:image\/png;base64,iVBOR/);
  const loadedWidth = (img) =>
    img.complete ? img.naturalWidth : new Promise((done) => img.addEventListener("load", () => done(img.naturalWidth)));
  assert.equal(await user.locator("img.baton-thumbnail").evaluate(loadedWidth), 32); // decoded from the data: URL

  const code = message(page, "m_asst2").locator("pre.baton-code code.hljs.language-python");
  assert.equal(await code.locator(".hljs-keyword").first().textContent(), "def");
  assert.ok((await code.locator("span[class^='hljs-']").count()) >= 4);
  assert.equal(await message(page, "m_asst2").locator("a").getAttribute("href"), "https://example.com/docs");
  assert.equal(await message(page, "m_asst2").locator(".baton-pin").count(), 1);

  // Thinking, the tool call and its result are folded; the result names its tool.
  const asst = message(page, "m_asst1");
  assert.equal(await asst.locator("details.baton-thinking").evaluate((d) => d.open), false);
  await asst.locator("details.baton-thinking > summary").click();
  // Built on the toggle event that follows the click: the locator waits for it.
  assert.match(await asst.locator("details.baton-thinking .baton-markdown").textContent(), /subtracted before/);
  // A document is named, never fetched or shown.
  assert.equal(await user.locator(".baton-chip").textContent(), "Document: march.pdf (application/pdf)");
  const call = asst.locator("details.baton-tool-use");
  assert.equal(await call.evaluate((d) => d.open), false);
  assert.match(await call.locator("summary").textContent(), /read_file/);
  assert.equal(await call.locator(".baton-tool-body").isVisible(), false);
  const result = message(page, "m_result1").locator("details.baton-tool-result");
  assert.equal(await result.evaluate((d) => d.open), false);
  assert.match(await result.locator("summary").textContent(), /Tool result\s*read_file/);
  await call.locator("summary").click();
  assert.match(await call.locator(".baton-tool-body").textContent(), /"path": "server\/baton\/core\/budget.py"/);

  // The compaction boundary: folded summary, the files restored after it, Undo with its id.
  const summary = message(page, "m_summary").locator("details.baton-summary");
  assert.equal(await summary.evaluate((d) => d.open), false);
  assert.match(await summary.locator("summary").textContent(), /2 files restored/);
  await summary.locator("summary").click();
  assert.deepEqual(await summary.locator(".baton-restored li").allTextContents(), ["budget.py", "PROTOCOL.md"]);
  assert.equal(await summary.locator("h2").first().textContent(), "Primary request");
  assert.doesNotMatch(await summary.textContent(), /<\/?summary>/); // the model's wrapper tags
  await message(page, "m_summary").getByRole("button", { name: "Undo" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "undo"), { type: "undo", boundaryId: "bnd_1", sessionId: SESSION.sessionId });

  // The usage chart: a stacked bar in sight; unfolded, a bar for every category present,
  // unknown ones included.
  const segments = await page.$$eval(".baton-usage-stack .baton-usage-seg", (els) => els.map((el) => el.className));
  assert.equal(segments.length, 6); // all but free space
  assert.equal(await page.locator(".baton-usage-tick").evaluate((el) => el.style.left), "83.5%");
  assert.equal(await page.locator(".baton-usage-row").first().isVisible(), false);
  await page.locator(".baton-usage > summary").click();
  assert.equal(await page.locator(".baton-usage-row").first().isVisible(), true);
  const categories = await page.$$eval(".baton-usage-row", (rows) => rows.map((r) => r.dataset.category));
  assert.deepEqual(categories, ["system", "tools", "messages", "summary", "attachments", "unattributed", "free"]);
  const width = await page
    .locator(".baton-usage-row[data-category=messages] .baton-usage-fill")
    .evaluate((el) => el.style.width);
  assert.equal(width, "49%");
  assert.match(
    await page.locator(".baton-usage > summary").textContent(),
    /62% used · 124K\/200K est\. · compacts at 167K/,
  );

  await page.screenshot({ path: join(RESULTS, "webview-dark.png") });
});

test("a code block's Copy button puts its code on the clipboard", async (t) => {
  const page = await openView(t);
  const shown = await showFixture(page);
  const block = message(page, "m_asst2").locator("pre.baton-code");
  await block.hover();
  // The button says "Copied" once the (asynchronous) write is done, for a moment only:
  // watch for it from before the click.
  const copied = block.getByRole("button", { name: "Copy code" }).evaluate(
    (button) =>
      new Promise((resolve) =>
        new MutationObserver(() => button.textContent === "Copied" && resolve(true)).observe(button, {
          childList: true,
          characterData: true,
          subtree: true,
        }),
      ),
  );
  await block.getByRole("button", { name: "Copy code" }).click();
  assert.equal(await copied, true);
  assert.equal(
    await page.evaluate(() => navigator.clipboard.readText()),
    "def percent_left(used: int, threshold: int) -> int:\n    return max(0, min(100, 100 * (threshold - used) // threshold))\n",
  );
  // The button is the code block's own: the message is not selected by it.
  assert.equal((await posted(page)).slice(shown).filter((m) => m.type === "selection").length, 0);
});

test("before the host's first update the view says it is waiting; an error ends the wait", async (t) => {
  const page = await openView(t);
  assert.equal(await page.getByRole("status").textContent(), "Waiting for the Baton server…");
  await toView(page, { type: "error", message: "Baton's server is not running." });
  assert.equal(
    await page.getByRole("alert").locator(".baton-banner-text").textContent(),
    "Baton's server is not running.",
  );
  assert.equal(await page.locator(".baton-starting").count(), 0);
  // The server comes up: the session shows, the banner can be dismissed.
  await showFixture(page);
  await page.getByRole("alert").getByRole("button", { name: "Dismiss" }).click();
  assert.equal(await page.getByRole("alert").isVisible(), false);
});

test("two compactions: each summary lists the files it restored and undoes its own boundary", async (t) => {
  const page = await openView(t);
  const text = (said) => [{ type: "text", text: said }];
  const base = { role: "user", createdAt: "2026-12-01T09:00:00Z", tokens: 10, pinned: false };
  const attached = (id, boundaryId, path, label) => ({ ...base, id, kind: "attachment", boundaryId, attachment: { path, label } });
  const messages = [
    { ...base, id: "s1", kind: "summary", boundaryId: "bnd_1", content: text("First summary") },
    { ...base, id: "u1", kind: "message", content: text("kept prompt") },
    { ...base, id: "s2", kind: "summary", boundaryId: "bnd_2", content: text("Second summary") },
    { ...attached("a1", "bnd_1", "/p/one.py", "Restored file"), content: text("Restored file: /p/one.py\nx") },
    // What the view shows comes from the fields, never from the text the model reads.
    { ...attached("a2", "bnd_2", "/p/two.py", "Restored file"), content: text("the model's heading\ny") },
    { ...attached("a3", "bnd_2", "/p/CLAUDE.md", "Project instructions"), content: text("heading\nUse tabs.") },
    { ...base, id: "n2", kind: "attachment", boundaryId: "bnd_2", content: text("Restored file: /p/not-a-file\nA note") },
  ];
  await toView(page, sessionUpdate({ messages }));
  await message(page, "n2").waitFor();
  const files = (id) => message(page, id).locator(".baton-restored li").allTextContents();
  assert.deepEqual(await files("s1"), ["one.py"]);
  assert.deepEqual(await files("s2"), ["two.py", "CLAUDE.md"]); // the note names no file
  const heading = (id) => message(page, id).locator("details.baton-attachment > summary").textContent();
  assert.equal(await heading("a2"), "Restored file two.py /p");
  assert.equal(await heading("a3"), "Project instructions CLAUDE.md /p");
  assert.equal(await heading("n2"), "Note");
  await message(page, "a3").locator("details.baton-attachment > summary").click();
  assert.equal(await message(page, "a3").locator("details.baton-attachment .baton-markdown").textContent(), "Use tabs.\n");
  const from = (await posted(page)).length;
  await message(page, "s1").getByRole("button", { name: "Undo" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "undo", from), { type: "undo", boundaryId: "bnd_1", sessionId: SESSION.sessionId });
});

test("a summary the API wrote shows its compaction block's text", async (t) => {
  const page = await openView(t);
  const base = { createdAt: "2026-12-01T09:00:00Z", tokens: 10, pinned: false };
  const block = { type: "compaction", content: "## Intent\nThe API's own summary.", signature: "sig" };
  const messages = [
    { ...base, id: "s1", role: "assistant", kind: "summary", boundaryId: "bnd_1", content: [block] },
    { ...base, id: "u1", role: "user", kind: "message", content: [{ type: "text", text: "kept prompt" }] },
  ];
  await toView(page, sessionUpdate({ messages }));
  const summary = message(page, "s1").locator("details.baton-summary");
  await summary.locator("summary").click();
  assert.equal(await summary.locator("h2").first().textContent(), "Intent");
  assert.match(await summary.textContent(), /The API's own summary\./);
  assert.doesNotMatch(await summary.textContent(), /sig/);
});

test("a usage update redraws the chart; a session without a boundary id undoes the last", async (t) => {
  const page = await openView(t);
  const messages = MESSAGES.map(({ boundaryId, ...m }) => m);
  await showFixture(page, { messages });
  const usage = {
    ...sessionUpdate().usage,
    usedTokens: 40000,
    percentUsed: 20,
    breakdown: { system: 3000, messages: 37000, free: 160000 },
    text: { ...sessionUpdate().usage.text, panel: "20% used · 40K/200K est. · compacts at 167K" },
    estimatorExact: false,
    warnings: ["unknown model: a 200K window was assumed"],
  };
  await toView(page, { type: "usage", sessionId: "s_other", usage: { ...usage, percentUsed: 99 } }); // another session: ignored
  await toView(page, { type: "usage", sessionId: SESSION.sessionId, usage });
  await page.waitForFunction(() =>
    document.querySelector(".baton-usage > summary")?.textContent?.startsWith("20% used"),
  );
  const categories = await page.$$eval(".baton-usage-row", (rows) => rows.map((r) => r.dataset.category));
  assert.deepEqual(categories, ["system", "messages", "free"]);
  const title = await page.locator(".baton-usage > summary").textContent();
  assert.equal(title, "20% used · 40K/200K est. · compacts at 167K · 2 warnings");
  await page.locator(".baton-usage > summary").click();
  assert.deepEqual(await page.locator(".baton-usage-warnings li").allTextContents(), [
    "Token counts come from an approximate tokenizer.",
    "unknown model: a 200K window was assumed",
  ]);
  assert.equal(await page.locator(".baton-usage-tick").count(), 1);
  // auto-compact off: no tick where nothing happens
  const off = { ...usage, autoCompactEnabled: false, text: { ...usage.text, panel: "20% used · auto-compact off" } };
  await toView(page, { type: "usage", sessionId: SESSION.sessionId, usage: off });
  await page.waitForFunction(() => document.querySelector(".baton-usage > summary")?.textContent?.includes("auto-compact off"));
  assert.equal(await page.locator(".baton-usage-tick").count(), 0);
  // auto-compact paused (the thrash guard stopped it): it does not run there either
  const stopped = {
    ...usage,
    autoCompactPaused: true,
    autoCompactPausedBy: "thrashing",
    text: { ...usage.text, panel: "20% used · 40K/200K est. · auto-compact stopped" },
  };
  await toView(page, { type: "usage", sessionId: SESSION.sessionId, usage: stopped });
  await page.waitForFunction(() => document.querySelector(".baton-usage > summary")?.textContent?.includes("auto-compact stopped"));
  assert.equal(await page.locator(".baton-usage-tick").count(), 0);
  await page.getByRole("button", { name: "Open as Document" }).click();
  await waitPosted(page, (m) => m.type === "openSessionDocument");
  // Without ids the restored files are the attachments after the summary.
  assert.deepEqual(await message(page, "m_summary").locator(".baton-restored li").allTextContents(), [
    "budget.py",
    "PROTOCOL.md",
  ]);
  await message(page, "m_summary").getByRole("button", { name: "Undo" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "undo"), { type: "undo", sessionId: SESSION.sessionId });
});

test("a session another process holds is shown read-only: no sending, no Undo", async (t) => {
  const page = await openView(t);
  await showFixture(page, { session: { ...SESSION, readOnly: true } });
  assert.match(await page.locator(".baton-lock-note").textContent(), /another Baton process/);
  assert.equal(await page.locator("#baton-input").isDisabled(), true);
  assert.equal(await page.getByRole("button", { name: "Send" }).isDisabled(), true);
  assert.equal(await message(page, "m_summary").getByRole("button", { name: "Undo" }).count(), 0);
  // Reading still works: the summary opens, messages select.
  await message(page, "m_summary").locator("details.baton-summary > summary").click();
  assert.equal(
    await message(page, "m_summary")
      .locator("details.baton-summary")
      .evaluate((d) => d.open),
    true,
  );
  // The lock lifts with the next update.
  await showFixture(page);
  assert.equal(await page.locator("#baton-input").isDisabled(), false);
  await message(page, "m_summary").getByRole("button", { name: "Undo" }).waitFor();
});

test("a narrow side bar: long paths, URLs and tables never widen the view", async (t) => {
  const page = await openView(t, "dark", { width: 280, height: 700 });
  const long = {
    id: "m_long",
    role: "assistant",
    kind: "message",
    pinned: false,
    tokens: 5,
    createdAt: "2026-12-01T09:40:00Z",
    content: [
      {
        type: "text",
        text:
          "See /work/project/server/baton/core/compaction/a_module_name_without_any_break_in_it.py and " +
          "https://example.com/a/really/long/url/that/does/not/break/anywhere\n\n" +
          "| a | b | c | d |\n|---|---|---|---|\n| aaaaaaaaaaaa | bbbbbbbbbbbb | cccccccccccc | dddddddddddd |",
      },
    ],
  };
  await toView(page, sessionUpdate({ messages: [...MESSAGES, long] }));
  await message(page, "m_long").waitFor();
  const [scroll, client] = await page.locator(".baton-feed").evaluate((el) => [el.scrollWidth, el.clientWidth]);
  assert.equal(scroll, client);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), 280);
  await page.locator(".baton-feed").evaluate((el) => (el.scrollTop = el.scrollHeight));
  await page.screenshot({ path: join(RESULTS, "webview-narrow.png") });
});

test("the welcome offers New Chat and Import when there is no session", async (t) => {
  const page = await openView(t, "light");
  await toView(page, sessionUpdate({ session: null, messages: [], usage: null }));
  const welcome = page.locator(".baton-welcome");
  await welcome.waitFor();
  assert.equal(await page.locator(".baton-feed").isVisible(), false);
  assert.equal(await page.locator("#baton-input").isVisible(), false);
  await welcome.getByRole("button", { name: "New Chat" }).click();
  await waitPosted(page, (m) => m.type === "newChat");
  await welcome.getByRole("button", { name: "Import Claude Code Session" }).click();
  await waitPosted(page, (m) => m.type === "import");
  await welcome.getByRole("button", { name: "Fix the importer" }).click();
  assert.deepEqual(await waitPosted(page, (m) => m.type === "selectSession"), {
    type: "selectSession",
    sessionId: "s_other",
  });
  await page.screenshot({ path: join(RESULTS, "webview-welcome-light.png") });
});

test("a session opened from the welcome with the keyboard has the focus in its input box", async (t) => {
  const page = await openView(t);
  await toView(page, sessionUpdate({ session: null, messages: [], usage: null }));
  const welcome = page.locator(".baton-welcome");
  await welcome.getByRole("button", { name: "New Chat" }).focus();
  await page.keyboard.press("Enter");
  await waitPosted(page, (m) => m.type === "newChat");
  await toView(page, sessionUpdate({ session: { ...SESSION, compactions: 0 }, messages: [] }));
  await page.locator("#baton-input").waitFor();
  // not the page's body (the welcome went with the focus): the user types at once
  assert.equal(await page.evaluate(() => document.activeElement?.id), "baton-input");
  await page.keyboard.type("Hello");
  assert.equal(await page.locator("#baton-input").inputValue(), "Hello");
});

test("the light theme renders with the theme's colours", async (t) => {
  const page = await openView(t, "light", { width: 420, height: 1200 });
  await showFixture(page);
  await message(page, "m_summary").locator("details.baton-summary > summary").click();
  await message(page, "m_asst1").locator("details.baton-tool-use > summary").click();
  await clickMessage(page, "m_asst2");
  const text = await page.evaluate(() => getComputedStyle(document.body).color);
  assert.equal(text, "rgb(59, 59, 59)"); // --vscode-foreground
  const keyword = await page
    .locator(".language-python .hljs-keyword")
    .first()
    .evaluate((el) => getComputedStyle(el).color);
  assert.equal(keyword, "rgb(0, 0, 255)");
  await page.screenshot({ path: join(RESULTS, "webview-light.png") });
});

test("high contrast: the selection is an outline in the theme's active border colour", async (t) => {
  const page = await openView(t, "hc", { width: 420, height: 1200 });
  await showFixture(page);
  await clickMessage(page, "m_asst2");
  const outline = await message(page, "m_asst2").evaluate((el) => {
    const style = getComputedStyle(el);
    return [style.outlineStyle, style.outlineColor];
  });
  assert.deepEqual(outline, ["solid", "rgb(243, 133, 24)"]);
  await page.screenshot({ path: join(RESULTS, "webview-high-contrast.png") });
});

test("the harness does report CSP violations (the checks above can fail)", async () => {
  const context = await env.browser.newContext();
  const page = await context.newPage();
  try {
    await page.goto(env.server.url());
    await waitPosted(page, (m) => m.type === "ready");
    await page.evaluate(() => {
      const el = document.createElement("div");
      el.innerHTML = '<span style="color: red">inline</span>';
      document.body.appendChild(el);
      const s = document.createElement("script");
      s.textContent = "window.ran = true";
      document.body.appendChild(s);
    });
    await page.waitForFunction(() => window.__baton.violations.length >= 2);
    assert.equal(await page.evaluate(() => window.ran ?? false), false);
  } finally {
    await context.close();
  }
});

test("the usage chart's figures round half up in the unit they round to: 1M, not 1000K; 10K, not 9.9K", async (t) => {
  const page = await openView(t);
  const usage = {
    ...USAGE,
    contextWindow: 1_000_000,
    usedTokens: 999_600,
    breakdown: { system: 9_950, tools: 0, messages: 999_600, summary: 0, attachments: 0, unattributed: 0, free: 400 },
  };
  await showFixture(page, { usage });
  await page.locator(".baton-usage > summary").click();
  const value = page.locator(".baton-usage-row[data-category=messages] .baton-usage-value");
  assert.equal(await value.textContent(), "1M");
  assert.equal(await page.locator(".baton-usage-row[data-category=system] .baton-usage-value").textContent(), "10K");
  assert.equal(await page.locator(".baton-usage-row[data-category=free] .baton-usage-value").textContent(), "400");
});

test("a tool result's image part without a usable source is named, not a broken view", async (t) => {
  // a tool result's parts are whatever the caller appended (the server keeps them as given)
  const odd = {
    id: "m_odd",
    role: "user",
    kind: "message",
    content: [
      {
        type: "tool_result",
        tool_use_id: "tu_1",
        content: [{ type: "image" }, { type: "image", source: null }, { type: "text", text: "after the images" }],
      },
    ],
    createdAt: "2026-12-01T09:31:11Z",
    tokens: 40,
  };
  const page = await openView(t);
  await toView(page, sessionUpdate({ messages: [...MESSAGES.slice(0, 3), odd] }));
  const result = message(page, "m_odd").locator("details.baton-tool-result");
  await result.locator("summary").click();
  await result.getByText("after the images").waitFor();
  assert.deepEqual(await result.locator(".baton-chip").allTextContents(), ["Image", "Image"]);
});

test("only http(s) links in a reply are links: vscode:, command:, file: and the like stay text", async (t) => {
  const links = {
    id: "m_links",
    role: "assistant",
    kind: "message",
    content: [
      {
        type: "text",
        text:
          "[docs](https://example.com/docs) [plain](http://example.com/a) " +
          "[install](vscode://ms-python.python/install) [run](command:workbench.action.terminal.new) " +
          "[spoof](command:baton.newChat?%5B%5D) <vscode:extension/evil.ext> <ftp://example.com/f> " +
          "[rel](src/app.py) [proto](//example.com/x) [mail](mailto:me@example.com)",
      },
    ],
    createdAt: "2026-12-01T09:40:00Z",
    tokens: 60,
  };
  const page = await openView(t);
  await toView(page, sessionUpdate({ messages: [...MESSAGES, links] }));
  const reply = message(page, "m_links");
  await reply.waitFor();
  const hrefs = await reply.locator(".baton-markdown a").evaluateAll((as) => as.map((a) => a.getAttribute("href")));
  assert.deepEqual(hrefs, ["https://example.com/docs", "http://example.com/a"]);
  // the others are shown as written, readable and copyable
  const shown = await reply.locator(".baton-markdown").textContent();
  assert.match(shown, /\[install\]\(vscode:\/\/ms-python\.python\/install\)/);
  assert.match(shown, /\[run\]\(command:workbench\.action\.terminal\.new\)/);
  assert.match(shown, /vscode:extension\/evil\.ext/);
});

test("usage over the window fills the bar in proportion, marks where the window ends, and says the real figure", async (t) => {
  const page = await openView(t);
  const usage = {
    ...USAGE,
    usedTokens: 250_000,
    percentUsed: 100,
    state: "blocking",
    text: { ...USAGE.text, panel: "125% used · 250K/200K est. · compacts at 167K" },
    breakdown: { system: 5_000, tools: 10_000, messages: 220_000, summary: 0, attachments: 0, unattributed: 15_000, free: 0 },
  };
  await showFixture(page, { usage });
  const stack = page.locator(".baton-usage-stack");
  const widths = await stack.locator(".baton-usage-seg").evaluateAll((els) => els.map((el) => el.style.width));
  // each part a share of what is used, so the parts fill the bar exactly, in their proportions
  assert.deepEqual(widths, ["2%", "4%", "88%", "6%"]);
  assert.equal(await stack.getAttribute("data-over"), "true");
  assert.equal(await stack.locator(".baton-usage-limit").evaluate((el) => el.style.left), "80%");
  assert.equal(await stack.locator(".baton-usage-tick").evaluate((el) => el.style.left), "66.8%");
  assert.equal(await stack.getAttribute("title"), "250,000 tokens: 125% of the 200,000-token window");
  assert.match(await page.locator(".baton-usage > summary").textContent(), /125% used · 250K\/200K/);
  // the stack is no wider than the panel gives it
  const [box, parts] = await stack.evaluate((el) => [
    el.getBoundingClientRect().width,
    [...el.querySelectorAll(".baton-usage-seg")].reduce((sum, seg) => sum + seg.getBoundingClientRect().width, 0),
  ]);
  assert.ok(parts <= box + 0.5, `the parts (${parts}px) overflow the bar (${box}px)`);

  // back under the window: no mark
  await toView(page, sessionUpdate());
  await page.waitForFunction(() => !document.querySelector(".baton-usage-stack").dataset.over);
  assert.equal(await stack.locator(".baton-usage-limit").count(), 0);
  assert.equal(await stack.getAttribute("title"), null);
});
