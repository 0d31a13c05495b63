// Drives the chat webview in headless Chromium (Debian's, never a downloaded one) under the
// extension's CSP, with a stand-in host: the browser and server for a test file, a fresh
// view per test, and ways to talk to it and wait for what it posts.
import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { after, before } from "node:test";
import { chromium } from "playwright-core";
import { MESSAGES, sessionUpdate } from "./fixture.mjs";
import { CLIENT_ROOT, serve } from "./harness.mjs";

export const RESULTS = join(CLIENT_ROOT, "test-results");
/** The file's browser and loopback server, set once its `before` hook has run. */
export const env = { browser: undefined, server: undefined };

/** Register the hooks that start and stop the browser and server around a test file. */
export function useBrowser() {
  before(async () => {
    env.server = await serve();
    env.browser = await chromium.launch({
      executablePath: process.env.BATON_CHROMIUM || "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    await mkdir(RESULTS, { recursive: true });
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
  });
}

/** A fresh view (its own session storage) that has loaded and said it is ready. */
export async function openView(t, theme = "dark", size = { width: 420, height: 900 }) {
  const context = await env.browser.newContext({ viewport: size });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: env.server.origin });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  t.after(async () => {
    // Every page must have run without a CSP violation or an uncaught error.
    const violations = await page.evaluate(() => window.__baton.violations).catch(() => []);
    await context.close();
    assert.deepEqual(violations, [], "CSP violations");
    assert.deepEqual(errors, [], "page errors");
  });
  await page.goto(env.server.url(theme));
  await waitPosted(page, (m) => m.type === "ready");
  return page;
}

/** What the host posts to the view. */
export const toView = (page, message) => page.evaluate((m) => window.postMessage(m, "*"), message);
/** Everything the view has posted to the host, in order. */
export const posted = (page) => page.evaluate(() => window.__baton.posted);

/** `frames` animation frames have gone by (then a task): the feed has measured and placed what changed. */
export const frame = (page, frames = 1) =>
  page.evaluate(
    (n) =>
      new Promise((r) => {
        const step = (left) => (left === 0 ? setTimeout(r, 0) : requestAnimationFrame(() => step(left - 1)));
        step(n);
      }),
    frames,
  );

/** The first message posted at or after index `from` that matches, waiting for it if need be. */
export async function waitPosted(page, predicate, from = 0) {
  for (;;) {
    const all = await posted(page);
    const found = all.slice(from).find(predicate);
    if (found) return found;
    // Wait for the next post (the page's CSP forbids evaluating the predicate in it).
    await page.waitForFunction((n) => window.__baton.posted.length > n, all.length, { timeout: 20_000 });
  }
}

/** Show the fixture; resolves once it is drawn, with the count of posts so far. */
export async function showFixture(page, overrides) {
  await toView(page, sessionUpdate(overrides));
  await page.locator(`article[data-message-id="${MESSAGES.at(-1).id}"]`).waitFor();
  return (await posted(page)).length;
}

export const message = (page, id) => page.locator(`article[data-message-id="${id}"]`);
/** Click a message's edge (not a link or button inside it). */
export const clickMessage = (page, id, options = {}) =>
  message(page, id).click({ position: { x: 4, y: 4 }, ...options });
