"""Which Markdown blocks a message's text leaves open, and the lines that close them.

A fenced code block or an HTML block of CommonMark's kinds 1 to 5 (`<pre>`, `<!--`, `<?`,
`<!X`, `<![CDATA[`) that is still open at the end of a text goes on through the blank line
and the next message's `## ` heading: a viewer would show every later message inside it (a
reply cut off inside a code block is common). Every other block ends at that blank line or
at the heading (a block quote, a list item, a paragraph). The scan follows CommonMark's
containers (block quotes, list items) so that a block open only inside one, which the
heading closes anyway, gets no closing line: a well-formed text is never changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_QUOTE = re.compile(r" {0,3}> ?")
_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?= |$)")
_BREAK = re.compile(r" {0,3}(?:(?:\* *){3,}|(?:- *){3,}|(?:_ *){3,})$")
_HEADING = re.compile(r" {0,3}#{1,6}(?: |$)")
_UNDERLINE = re.compile(r" {0,3}(?:=+|-+) *$")  # after a paragraph: it is a heading
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_CLOSING_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*$")
_HTML = re.compile(
    r" {0,3}<(?:(pre|script|style|textarea)(?:[ \t>]|$)|!--|\?|![A-Za-z]|!\[CDATA\[)", re.I
)
_RAW_ENDS = ("</pre>", "</script>", "</style>", "</textarea>")
_HTML_ENDS = {"<!--": "-->", "<?": "?>", "<![CDATA[": "]]>"}
# CommonMark's kind 6: a block-level tag starts HTML that a blank line ends (a fence in it
# is HTML too)
_BLOCK_TAG = re.compile(
    r" {0,3}</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|"
    r"colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|"
    r"frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    r"noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|"
    r"thead|title|tr|track|ul)(?:[ \t>]|/>|$)",
    re.I,
)
# kind 7: a whole open or closing tag alone on its line (not after paragraph text)
_TAG_LINE = re.compile(
    r" {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w:.-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'"
    r"|\"[^\"]*\"))?)*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)\s*$"
)


@dataclass(frozen=True, slots=True)
class _Fence:
    mark: str  # its opening run of backticks or tildes

    def closes(self, line: str) -> bool:
        m = _CLOSING_FENCE.match(line)
        return m is not None and m.group(1)[0] == self.mark[0] and len(m.group(1)) >= len(self.mark)


@dataclass(frozen=True, slots=True)
class _Html:
    close: str  # the line written to close it
    ends: tuple[str, ...]  # any of these in a line ends it

    def closes(self, line: str) -> bool:
        lowered = line.lower()
        return any(end in lowered for end in self.ends)


_PARAGRAPH = "paragraph"
_UNTIL_BLANK = "html until a blank line"
_Leaf = _Fence | _Html | str | None


def closed_blocks(blocks: list[list[str]]) -> list[str]:
    """A message's blocks' lines, a blank line between two, each block followed by the
    line closing what it leaves open at the top level, if anything (a block is read where
    it sits: after the ones before it in the message)."""
    out: list[str] = []
    if not any("```" in line or "~~~" in line or "<" in line for b in blocks for line in b):
        for block in blocks:  # nothing in them can open a block that needs closing
            out.extend(["", *block] if out else block)
        return out
    scan = _Scan()
    for block in blocks:
        for line in ["", *block] if out else block:
            scan.line(line)
            out.append(line)
        closing = scan.closing()
        if closing is not None:
            scan.line(closing)
            out.append(closing)
    return out


class _Scan:
    """CommonMark's block structure as far as the closing lines need it, a line at a time."""

    def __init__(self) -> None:
        self.containers: list[int] = []  # -1: a block quote; else a list item's content indent
        self.leaf: _Leaf = None
        self.empty_item = -1  # the depth of an item opened empty on the line before (or -1)

    def closing(self) -> str | None:
        """The line closing the block open at the top level, if one is open there: a blank
        line and a heading close every other (a container, and what it holds, too)."""
        leaf = self.leaf
        if self.containers or not isinstance(leaf, _Fence | _Html):
            return None
        return leaf.mark if isinstance(leaf, _Fence) else leaf.close

    def line(self, raw: str) -> None:
        line = raw.expandtabs(4) if "\t" in raw else raw
        containers, rest, matched = self.containers, line, 0
        if self.empty_item >= 0 and not line.strip():
            del containers[self.empty_item :]  # an item starts with at most one blank line
        self.empty_item = -1
        for indent in containers:
            if indent < 0:
                quote = _QUOTE.match(rest)
                if quote is None:
                    break
                rest = rest[quote.end() :]
            elif rest.strip():
                if len(rest) - len(rest.lstrip(" ")) < indent:
                    break
                rest = rest[indent:]
            matched += 1
        leaf = self.leaf
        if matched < len(containers):
            if leaf == _PARAGRAPH and rest.strip() and not _starts_block(rest):
                return  # a lazy continuation line of the paragraph
            del containers[matched:]
            leaf = self.leaf = None
        if isinstance(leaf, _Fence | _Html):
            if leaf.closes(rest):
                self.leaf = None
            return
        if leaf == _UNTIL_BLANK and rest.strip():
            return
        if leaf == _PARAGRAPH and _UNDERLINE.match(rest):
            self.leaf = None
            return
        depth = len(containers)
        rest = _open_containers(rest, containers, leaf == _PARAGRAPH)
        if len(containers) > depth and containers[-1] >= 0 and not rest.strip():
            self.empty_item = len(containers) - 1
        self.leaf = _leaf(rest, leaf)


def _open_containers(rest: str, containers: list[int], in_paragraph: bool) -> str:
    """`rest` past the block quote and list item markers it starts with (pushed)."""
    while True:
        quote = _QUOTE.match(rest)
        if quote is not None:
            containers.append(-1)
            rest, in_paragraph = rest[quote.end() :], False
            continue
        item = _ITEM.match(rest)
        if item is None or _BREAK.match(rest) or (in_paragraph and not _interrupts(rest)):
            return rest
        after = rest[item.end() :]
        spaces = len(after) - len(after.lstrip(" "))
        # an empty item, or one starting with indented code: content one space after
        indent = item.end() + (spaces if after.strip() and spaces <= 4 else 1)
        containers.append(indent)
        rest, in_paragraph = rest[indent:], False


def _interrupts(item: str) -> bool:
    """Whether a list item can interrupt a paragraph: not empty, and an ordered one only
    when it starts at 1."""
    marker, _, content = item.lstrip(" ").partition(" ")
    return bool(content.strip()) and (marker in "-+*" or marker[:-1] == "1")


def _leaf(rest: str, leaf: _Leaf) -> _Leaf:
    if not rest.strip():
        return None
    if leaf != _PARAGRAPH and len(rest) - len(rest.lstrip(" ")) >= 4:
        return None  # indented code
    fence = _fence(rest)
    if fence is not None:
        return fence
    html = _HTML.match(rest)
    if html is not None:
        block = _html_block(rest[html.start() : html.end()].lstrip(" "), html.group(1))
        return None if block.closes(rest) else block
    if _BLOCK_TAG.match(rest) or (leaf != _PARAGRAPH and _TAG_LINE.match(rest)):
        return _UNTIL_BLANK
    if _HEADING.match(rest) or _BREAK.match(rest):
        return None
    return leaf if leaf == _PARAGRAPH else _PARAGRAPH


def _fence(rest: str) -> _Fence | None:
    fence = _FENCE.match(rest)
    if fence is None or (fence.group(1)[0] == "`" and "`" in fence.group(2)):
        return None  # a backtick fence's info string holds no backtick
    return _Fence(fence.group(1))


def _html_block(start: str, tag: str | None) -> _Html:
    if tag is not None:
        return _Html(f"</{tag.lower()}>", _RAW_ENDS)
    for opening, end in _HTML_ENDS.items():
        if start.startswith(opening):
            return _Html(end, (end,))
    return _Html(">", (">",))  # <!DOCTYPE ...> and the like


def _starts_block(rest: str) -> bool:
    """Whether `rest` begins a block (so it cannot continue a paragraph lazily)."""
    if _fence(rest) or any(p.match(rest) for p in (_QUOTE, _HTML, _BLOCK_TAG, _HEADING, _BREAK)):
        return True
    # any list item (an empty one, one from 2): an item of the paragraph's own list would
    # need the indent the line lacks
    return _ITEM.match(rest) is not None
