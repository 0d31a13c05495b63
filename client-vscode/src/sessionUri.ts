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
