/** Session document URIs, `baton:/sessions/<id>.md` (pure: no vscode import). */

export const SESSION_SCHEME = "baton";

/** The session a `baton:` URI names, or undefined for any other URI. */
export function sessionIdFromUri(uri: { scheme: string; path: string }): string | undefined {
  if (uri.scheme !== SESSION_SCHEME) {
    return undefined;
  }
  const match = /^\/sessions\/([^/]+)\.md$/.exec(uri.path);
  return match?.[1];
}

export function sessionDocumentPath(sessionId: string): string {
  return `/sessions/${sessionId}.md`;
}

/**
 * What a session document shows while the server cannot render it (a tab restored at
 * reload, before the server runs or when it failed to start): why, and that it reloads.
 */
export function sessionDocumentPlaceholder(sessionId: string, reason: string): string {
  return (
    `# Baton: ${sessionId}\n\n` +
    `This conversation's document comes from Baton's server, which is not running (${reason}).\n` +
    "It reloads by itself once the server runs. Baton: Show Logs says why it is not; " +
    "Baton: Restart Server tries again.\n"
  );
}
