"""Text kept to one line: the line breaks and other control characters of what a message
quotes (a file name may hold any) shown as escapes, in the command line's errors and in
every log record (`OneLineFilter`), so that a reader of the log sees one record a line and
no escape sequence reaches a terminal as it is."""

from __future__ import annotations

import logging

# a line break or another control character a name may hold, as an escape
_CONTROLS = {
    code: ascii(chr(code))[1:-1]
    for code in (*range(0x20), 0x7F, 0x85, 0x2028, 0x2029)
    if chr(code) != "\t"
}


def one_line(text: str) -> str:
    """`text` with its line breaks and control characters escaped (\\n, \\r, \\x1b)."""
    return text.translate(_CONTROLS)


class OneLineFilter(logging.Filter):
    """A handler filter: the record's message as one line (a traceback, told after it,
    keeps its lines)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: the handler reports it
            return True
        flat = one_line(message)
        if flat != message:
            record.msg, record.args = flat, None
        return True
