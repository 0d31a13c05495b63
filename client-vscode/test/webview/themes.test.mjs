// The reading features in each of VS Code's themes (light, dark, high contrast: the body
// class and the --vscode-* variables the harness sets): a long paste and a long tool result
// folded with their size, summaries titled by what they replaced, terminal escape codes
// gone, a disclosure that opens without selecting its message, "Unattributed" drawn in grey,
// and the message and code-block actions shown on hover with text that reads against what
// is behind it (the WCAG contrast ratio, computed in the page); a code block's Copy copies.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { SESSION, sessionUpdate } from "./fixture.mjs";
import { RESULTS, frame, message, openView, posted, toView, useBrowser } from "./view.mjs";

useBrowser();

const text = (t) => ({ type: "text", text: t });
const say = (id, role, t, tokens = 20) => ({ id, role, kind: "message", content: [text(t)], tokens });
const summary = (id, boundaryId, summarized) => ({
  id,
  role: "user",
  kind: "summary",
  boundaryId,
  content: [text(`<summary>\nWhat happened in those ${summarized} messages.\n</summary>`)],
  dropped: [`${summarized} messages summarized`],
  tokens: 300,
});
const PASTE = Array.from({ length: 120 }, (_, i) => `2026-03-02 09:00:${String(i % 60).padStart(2, "0")} worker ${i} ok`).join("\n");
const OUTPUT =
  "\x1b[1m\x1b[31mFAILED\x1b[0m tests/test_x.py::test_y\x1b]0;pytest\x07 - \x1b[32m1 passed\x1b[0m\x1b[K\n" +
  Array.from({ length: 60 }, (_, i) => `\x1b[2mtests/test_${i}.py\x1b[0m .`).join("\n");

// Row 4 is the part summary: it replaced what stood at rows 4-32 (1-based 5-33).
const MESSAGES = [
  summary("s_first", "b1", 12),
  say("u1", "user", "Run the tests"),
  {
    id: "call",
    role: "assistant",
    kind: "message",
    content: [text("Running them."), { type: "tool_use", id: "tu_1", name: "Bash", input: { command: "pytest" } }],
    toolCalls: [{ toolUseId: "tu_1", tool: "Bash", title: "Run `pytest`", status: "done", summary: "61 lines" }],
    tokens: 30,
  },
  { id: "out", role: "user", kind: "message", content: [{ type: "tool_result", tool_use_id: "tu_1", content: OUTPUT }], tokens: 900 },
  summary("s_mid", "b2", 29),
  { id: "paste", role: "user", kind: "message", content: [text(PASTE)], tokens: 2400 },
  say("a2", "assistant", "The log is clean. To run one test:\n\n```sh\npytest tests/test_x.py -k test_y\n```\n"),
  summary("s_last", "b3", 4),
];

async function show(t, theme) {
  const page = await openView(t, theme, { width: 420, height: 1500 });
  await toView(page, sessionUpdate({ messages: MESSAGES, session: { ...SESSION, compactions: 3 } }));
  await message(page, "s_last").waitFor();
  await message(page, "s_first").waitFor();
  return page;
}

/**
 * The contrast ratio (WCAG 2) of `el`'s text against what is painted behind it: its own and
 * its ancestors' backgrounds composited over the page's, the text's alpha and every
 * ancestor's opacity applied. Runs in the page.
 */
function contrast(el) {
  const rgba = (c) => {
    const m = /^rgba?\(([^)]+)\)$/.exec(c);
    if (!m) throw new Error(`not an rgb() colour: ${c}`);
    const [r, g, b, a = 1] = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return [r, g, b, a];
  };
  const over = (top, under, alpha) => top.map((v, i) => v * alpha + under[i] * (1 - alpha));
  const chain = [];
  for (let e = el; e; e = e.parentElement) chain.unshift(e);
  let behind = [255, 255, 255]; // the canvas under <html>
  let opacity = 1;
  for (const e of chain) {
    const s = getComputedStyle(e);
    const [r, g, b, a] = rgba(s.backgroundColor);
    behind = over([r, g, b], behind, a);
    opacity *= Number(s.opacity);
  }
  const [r, g, b, a] = rgba(getComputedStyle(el).color);
  const fore = over([r, g, b], behind, a * opacity);
  const lum = ([R, G, B]) => {
    const lin = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * lin(R) + 0.7152 * lin(G) + 0.0722 * lin(B);
  };
  const [hi, lo] = [lum(fore), lum(behind)].sort((x, y) => y - x);
  return { ratio: (hi + 0.05) / (lo + 0.05), text: el.textContent.trim().slice(0, 40), fore, behind };
}

const AA = 4.5; // WCAG AA for text of normal size

async function readable(locator, what) {
  const n = await locator.count();
  assert.ok(n > 0, `${what}: nothing to check`);
  for (let i = 0; i < n; i++) {
    const c = await locator.nth(i).evaluate(contrast);
    assert.ok(c.ratio >= AA, `${what} "${c.text}": contrast ${c.ratio.toFixed(2)} < ${AA} (${c.fore} on ${c.behind})`);
  }
}

for (const theme of ["light", "dark", "hc"]) {
  test(`reading a long session in the ${theme} theme`, async (t) => {
    const page = await show(t, theme);
    const bodyClass = await page.evaluate(() => document.body.className);
    assert.equal(bodyClass, { light: "vscode-light", dark: "vscode-dark", hc: "vscode-high-contrast" }[theme]);

    // Summaries: titled by what they replaced, and the titles read.
    const title = (id) => message(page, id).locator(".baton-summary > summary span").first();
    assert.equal(await title("s_first").textContent(), "Earlier conversation summarized");
    assert.equal(await title("s_mid").textContent(), "Messages 5-33 summarized");
    assert.equal(await title("s_last").textContent(), "Later conversation summarized");
    await readable(page.locator(".baton-summary > summary span:first-child"), "a summary's title");

    // The feed stacks the boxes it measures: nothing may stand between two messages (a
    // margin there is missing from the heights, and the feed jumps by it as it draws).
    const gaps = await page.$$eval(".baton-feed > .baton-spacer, .baton-feed > article[data-message-id]", (els) =>
      els
        .slice(1)
        .map((el, i) => [els[i].dataset.messageId ?? "spacer", el.getBoundingClientRect().top - els[i].getBoundingClientRect().bottom])
        .filter(([, gap]) => Math.abs(gap) > 0.5),
    );
    assert.deepEqual(gaps, [], "space between a message and the next");

    // The long paste: folded, its size in its line, the text not drawn until opened.
    const paste = message(page, "paste").locator("details.baton-paste");
    assert.match(await paste.locator("> summary").textContent(), /Pasted text\s*120 lines · 4(?:\.\d)?K characters/);
    assert.equal(await paste.evaluate((el) => el.open), false);
    assert.equal(await message(page, "paste").getByText("worker 119 ok").count(), 0);
    await readable(paste.locator("> summary .baton-meta"), "the paste's size");

    // A click on a disclosure opens it and selects nothing: the tool call, the paste, a summary.
    const selections = async () => (await posted(page)).filter((m) => m.type === "selection").length;
    const before = await selections();
    // Each click once the feed has placed what the one before opened.
    await message(page, "call").locator("details.baton-toolcall > summary").first().click();
    await frame(page, 2);
    await paste.locator("> summary").click();
    await message(page, "paste").getByText("worker 119 ok").waitFor();
    await frame(page, 2);
    await message(page, "s_mid").locator(".baton-summary > summary").click();
    await frame(page, 2);
    assert.equal(await message(page, "call").locator("details.baton-toolcall").first().evaluate((el) => el.open), true);
    assert.equal(await paste.evaluate((el) => el.open), true);
    const chosen = await page.$$eval("article.selected", (els) => els.map((el) => el.dataset.messageId));
    assert.deepEqual(chosen, [], "no message is selected");
    assert.equal(await selections(), before, "no selection was posted");

    // The tool's output: no escape codes, and the long result folded to its first lines.
    const body = message(page, "call").locator(".baton-toolcall-result");
    const shown = await body.locator("code").first().textContent();
    assert.ok(shown.startsWith("FAILED tests/test_x.py::test_y - 1 passed\ntests/test_0.py ."), JSON.stringify(shown.slice(0, 80)));
    assert.ok(!(await body.textContent()).includes("\x1b"), "no escape character is shown");
    assert.match(await body.locator(".baton-toolcall-more > summary").textContent(), /Show all 61 lines/);

    // "Unattributed": a hatch of the chart's grey, not the alarm red.
    const hatch = await page.locator(".baton-usage-stack .cat-unattributed").evaluate((el) => {
      const s = getComputedStyle(el);
      return { image: s.backgroundImage, background: s.backgroundColor };
    });
    assert.match(hatch.image, /repeating-linear-gradient/);
    const colours = [...hatch.image.matchAll(/rgba?\(([^)]+)\)/g)].map((m) => m[1].split(/[\s,/]+/).map(Number));
    const painted = colours.filter(([, , , a = 1]) => a > 0);
    assert.ok(painted.length > 0, hatch.image);
    for (const [r, g, b] of painted) assert.ok(Math.max(r, g, b) - Math.min(r, g, b) <= 16, `rgb(${r}, ${g}, ${b}) is grey`);
    assert.equal(hatch.background, "rgba(0, 0, 0, 0)", "no fill under the hatch");

    // The message's header reads; its actions are hidden until hovered, then shown, and
    // their words read against the hover's background.
    await readable(message(page, "u1").locator(".baton-role, .baton-meta"), "a message's header");
    const actions = message(page, "u1").locator(".baton-message-actions");
    assert.equal(await actions.evaluate((el) => getComputedStyle(el).opacity), "0");
    await message(page, "u1").hover();
    assert.equal(await actions.evaluate((el) => getComputedStyle(el).opacity), "1");
    assert.deepEqual(await actions.locator("button").allTextContents(), ["Edit", "Copy"]);
    await readable(actions.locator("button"), "a message action");
    await readable(message(page, "u1").locator(".baton-role"), "a hovered message's author");

    // A code block's actions, on hover (the opened paste pushed the reply down: scroll to it).
    await page.locator(".baton-feed").evaluate((el) => (el.scrollTop = el.scrollHeight));
    const block = message(page, "a2").locator("pre.baton-code").first();
    await block.hover();
    const codeActions = block.locator(".baton-code-actions");
    assert.equal(await codeActions.evaluate((el) => getComputedStyle(el).opacity), "1");
    await readable(codeActions.locator("button"), "a code block's action");
    assert.deepEqual(await codeActions.locator("button").allTextContents(), ["Insert", "Apply", "Copy"]);
    await codeActions.locator(".baton-copy").click();
    assert.equal((await page.evaluate(() => navigator.clipboard.readText())).trim(), "pytest tests/test_x.py -k test_y");

    // The screenshot: the paste folded again, from the top, the first prompt hovered.
    await paste.locator("> summary").click();
    await page.locator(".baton-feed").evaluate((el) => (el.scrollTop = 0));
    await message(page, "u1").hover();
    await page.screenshot({ path: join(RESULTS, `webview-themes-${theme}.png`) });
  });
}
