/**
 * The server's stderr as log lines at their own levels. `baton serve` logs
 * "<date> <time>,<ms> LEVEL logger: message"; each such line keeps its level (the log
 * channel adds its own time), a line without the prefix (a traceback's) takes the level of
 * the line before it, and anything before the first prefixed line (Python dying before
 * logging starts, the command line's "baton: ..." errors) is an error. Pure: no vscode.
 */

export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

export interface LogLine {
  level: LogLevel;
  text: string;
}

const PREFIX = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) (.*)$/;
const LEVELS: Record<string, LogLevel> = {
  DEBUG: "debug",
  INFO: "info",
  WARNING: "warn",
  ERROR: "error",
  CRITICAL: "error",
};

/** Reads the server's stderr line by line, remembering the level of the last prefixed line. */
export class ServerLogParser {
  private level: LogLevel = "error";

  line(raw: string): LogLine {
    const match = PREFIX.exec(raw);
    if (match !== null) {
      this.level = LEVELS[match[1]!] ?? "info";
      return { level: this.level, text: match[2]! };
    }
    return { level: this.level, text: raw };
  }
}

/** The methods of a LogOutputChannel a parsed line goes to. */
export type LevelSink = Record<LogLevel, (text: string) => void>;

/** Logs `raw` to `sink` at its level. */
export function logServerLine(parser: ServerLogParser, sink: LevelSink, raw: string): void {
  const { level, text } = parser.line(raw);
  sink[level](text);
}

const BAD_SETTING = /(?:^|\n|Baton: )(baton\.[A-Za-z][A-Za-z0-9_.]*): invalid value /;

/**
 * The first setting a message the server shows names as invalid ("Baton: baton.contextWindow:
 * invalid value 'huge' (...); using the default"), for a button that opens it; none otherwise.
 */
export function settingNamed(message: string): string | undefined {
  return BAD_SETTING.exec(message)?.[1];
}
