// The chat webview's own bundle in headless Chromium (Debian's) under the extension's CSP,
// fed a session the way the extension host feeds it (the last page, then the rest when the
// view asks), measured: time to first paint, time until the whole view is held, DOM
// elements, frames per second while scrolling the whole feed, and the page's JS heap.
//
//   node bench/webview.mjs --session NAME=PATH [--session NAME=PATH ...] --reps N
//
// PATH is a JSON file: {"session": Session, "messages": Message[]} (wire form). Prints one
// JSON object: {NAME: {series: [values per rep]}}. Run by bench/measure_webview.py.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { chromium } from "playwright-core";
import { CLIENT_ROOT, serve } from "../client-vscode/test/webview/harness.mjs";

const args = process.argv.slice(2);
const sessions = [];
let reps = 3;
let scrollMs = 3000;
for (let i = 0; i < args.length; i++) {
  if (args[i] === "--session") {
    const [name, path] = args[++i].split("=");
    sessions.push({ name, path });
  } else if (args[i] === "--reps") reps = Number(args[++i]);
  else if (args[i] === "--scroll-ms") scrollMs = Number(args[++i]);
}

// The page size the extension host uses (src/chatPages.ts), read so the two never differ.
const pages = await readFile(join(CLIENT_ROOT, "src", "chatPages.ts"), "utf8");
const PAGE = Number(/export const VIEW_PAGE = (\d+)/.exec(pages)?.[1]);
if (!PAGE) throw new Error("VIEW_PAGE not found in src/chatPages.ts");

const server = await serve();
const browser = await chromium.launch({
  executablePath: process.env.BATON_CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});

/** What the host posts for `messages`: the last page (with its offset) when the view is long. */
function sessionUpdate(session, messages) {
  const offset = Math.max(0, messages.length - PAGE);
  const update = { type: "session", session, sessions: [session], messages: messages.slice(offset), usage: null, hasApiKey: true };
  return offset > 0 ? { ...update, offset, totalMessages: messages.length } : update;
}

/** Post `message` to the view; resolves with the ms until the frame after the view handled it has painted. */
async function timedPost(page, message) {
  await page.evaluate((m) => (window.__bench = m), message);
  return page.evaluate(
    () =>
      new Promise((resolve) => {
        const t0 = performance.now();
        // Listening after the view: this runs once the view's own handler has drawn.
        window.addEventListener(
          "message",
          () => requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - t0), 0)),
          { once: true },
        );
        window.postMessage(window.__bench, "*");
        window.__bench = undefined;
      }),
  );
}

async function measureOnce(data) {
  const context = await browser.newContext({ viewport: { width: 420, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(server.url("dark"));
  await page.waitForFunction(() => window.__baton?.posted.some((m) => m.type === "ready"));
  const cdp = await context.newCDPSession(page);
  const update = sessionUpdate(data.session, data.messages);
  const firstPaint = await timedPost(page, update);
  const lastId = data.messages.at(-1).id;
  if ((await page.locator(`article[data-message-id="${lastId}"]`).count()) !== 1) throw new Error("the last message is not drawn");
  let wholeView = firstPaint;
  if (update.offset) {
    await page.waitForFunction(() => window.__baton.posted.some((m) => m.type === "loadEarlier"), null, { timeout: 30_000 });
    const earlier = { type: "earlier", sessionId: data.session.sessionId, messages: data.messages.slice(0, update.offset), totalMessages: data.messages.length };
    wholeView = firstPaint + (await timedPost(page, earlier));
  }
  const held = await page.evaluate(() => document.querySelectorAll("article[data-message-id]").length);
  const domAfterOpen = await page.evaluate(() => document.getElementsByTagName("*").length);
  // Scroll the whole feed from the end to the start and back, a screenful every few frames.
  const scroll = await page.evaluate(
    (ms) =>
      new Promise((resolve) => {
        const feed = document.querySelector(".baton-feed");
        let maxDom = 0;
        let frames = 0;
        let worst = 0;
        let direction = -1;
        let travelled = 0;
        const start = performance.now();
        let last = start;
        const step = (now) => {
          frames += 1;
          worst = Math.max(worst, now - last);
          last = now;
          const before = feed.scrollTop;
          feed.scrollTop += direction * 240;
          travelled += Math.abs(feed.scrollTop - before);
          if (feed.scrollTop <= 0) direction = 1;
          else if (feed.scrollTop + feed.clientHeight >= feed.scrollHeight - 1) direction = -1;
          if (frames % 10 === 0) maxDom = Math.max(maxDom, document.getElementsByTagName("*").length);
          if (now - start < ms) requestAnimationFrame(step);
          else resolve({ fps: (frames - 1) / ((now - start) / 1000), worstFrameMs: worst, maxDom, travelled, height: feed.scrollHeight });
        };
        requestAnimationFrame((now) => {
          last = now;
          requestAnimationFrame(step);
        });
      }),
    scrollMs,
  );
  await cdp.send("HeapProfiler.collectGarbage");
  const heap = await cdp.send("Runtime.getHeapUsage");
  await context.close();
  if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
  return {
    first_paint_ms: firstPaint,
    whole_view_ms: wholeView,
    messages: data.messages.length,
    articles_drawn: held,
    dom_after_open: domAfterOpen,
    dom_max_scrolling: Math.max(scroll.maxDom, domAfterOpen),
    scroll_fps: scroll.fps,
    worst_frame_ms: scroll.worstFrameMs,
    scrolled_px: scroll.travelled,
    feed_height_px: scroll.height,
    heap_mb: heap.usedSize / 1e6,
  };
}

const out = {};
try {
  const loaded = [];
  for (const { name, path } of sessions) loaded.push({ name, data: JSON.parse(await readFile(path, "utf8")) });
  await measureOnce(loaded[0].data); // warm the browser and the server once, unmeasured
  for (let rep = 0; rep < reps; rep++) {
    // The sizes take turns within a rep, so a load that comes and goes hits both sides.
    for (const { name, data } of loaded) {
      const figures = await measureOnce(data);
      out[name] ??= {};
      for (const [key, value] of Object.entries(figures)) (out[name][key] ??= []).push(value);
    }
  }
} finally {
  await browser.close();
  await server.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
