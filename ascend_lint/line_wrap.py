"""Keeping the lines a fix writes within the line length the project gives Ruff.

`ruff_line_length(path)` is the `line-length` of the Ruff configuration nearest the file
(`.ruff.toml`, `ruff.toml`, or a `pyproject.toml` with a `[tool.ruff]` table, in that
order in each folder, as Ruff looks; through `extend`), Ruff's 88 where that
configuration does not set it, and None where no project configures Ruff: then lines
are left as the fix wrote them.

`wrap_lines` splits a line inside its brackets the way `ruff format` splits one: the
contents of the outermost bracket pair that opens and closes on the line go on a line
of their own, one indent deeper (`f(\\n    a, b\\n)`); where that line is still too
long, one element per line, with a trailing comma where it changes nothing (a call's
arguments, a list, a tuple); then the same for each line that is still too long. It
only moves text between lines inside brackets; the fix engine checks that each split
statement reads the same to `ast` and libcst before it keeps it.
"""

from __future__ import annotations

import io
import keyword
import os
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

RUFF_DEFAULT_LINE_LENGTH = 88
_CONFIG_NAMES = (".ruff.toml", "ruff.toml", "pyproject.toml")
_MAX_EXTENDS = 8
_MAX_SPLITS = 64  # per statement: each split makes a line shorter, so this only bounds
_INDENT = "    "  # Ruff's default indent width; a tab-indented line is left alone
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_FSTRING_START = getattr(tokenize, "FSTRING_START", -1)
_FSTRING_END = getattr(tokenize, "FSTRING_END", -1)

_configs: dict[str, tuple[tuple[int, int], dict | None]] = {}


# -- the line length -----------------------------------------------------------------------
def ruff_line_length(path: str) -> int | None:
    """The line length Ruff applies to the file `path` (which need not exist), or None
    where no Ruff configuration is found above it."""
    folder = Path(os.path.abspath(path)).parent
    for directory in (folder, *folder.parents):
        for name in _CONFIG_NAMES:
            candidate = directory / name
            if not candidate.is_file():
                continue
            table = _ruff_table(candidate)
            if table is None and name == "pyproject.toml":
                continue  # a pyproject.toml without [tool.ruff]: Ruff looks further up
            return _line_length(candidate, table or {}, 0)
    return None


def _line_length(path: Path, table: dict, depth: int) -> int:
    value = table.get("line-length")
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    extend = table.get("extend")
    if isinstance(extend, str) and depth < _MAX_EXTENDS:
        base = path.parent / os.path.expanduser(extend)
        if base.is_file():
            return _line_length(base, _ruff_table(base) or {}, depth + 1)
    return RUFF_DEFAULT_LINE_LENGTH


def _ruff_table(path: Path) -> dict | None:
    """A configuration file's Ruff settings: the whole of `ruff.toml`, `[tool.ruff]` of
    `pyproject.toml` (None without one, or where the file cannot be read). Read once per
    version of the file."""
    try:
        stat = path.stat()
    except OSError:
        return None
    key = str(path)
    version = (stat.st_mtime_ns, stat.st_size)
    cached = _configs.get(key)
    if cached is not None and cached[0] == version:
        return cached[1]
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        data = None
    table = data
    if data is not None and path.name == "pyproject.toml":
        tool = data.get("tool")
        table = tool.get("ruff") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        table = None
    _configs[key] = (version, table)
    return table


# -- splitting a line inside its brackets ------------------------------------------------------
def width(line: str) -> int:
    """A line's length without its terminator."""
    return len(line.rstrip("\r\n"))


@dataclass
class _Pair:
    """A bracket pair: where it opens and closes ((row, column), row 1-based), the token
    before it, the commas directly inside it and whether a `for` is directly inside (a
    comprehension)."""

    opener: str
    start: tuple[int, int]
    before: tokenize.TokenInfo | None
    end: tuple[int, int] = (0, 0)
    commas: list[tuple[int, int]] = field(default_factory=list)
    comprehension: bool = False


def _pairs(text: str) -> list[_Pair] | None:
    """The bracket pairs of `text`, or None where it does not tokenize."""
    pairs: list[_Pair] = []
    stack: list[_Pair] = []
    previous = None
    in_fstring = 0  # Python 3.12 tokenizes an f-string's fields: their braces are not ours
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == _FSTRING_START:
                in_fstring += 1
            elif token.type == _FSTRING_END:
                in_fstring -= 1
            elif in_fstring:
                continue
            elif token.type == tokenize.OP and token.string in _OPENERS:
                stack.append(_Pair(token.string, token.start, previous))
            elif token.type == tokenize.OP and token.string in (")", "]", "}"):
                if not stack or _OPENERS[stack[-1].opener] != token.string:
                    return None
                pair = stack.pop()
                pair.end = token.start
                pairs.append(pair)
            elif stack and token.type == tokenize.OP and token.string == ",":
                stack[-1].commas.append(token.start)
            elif stack and token.type == tokenize.NAME and token.string in ("for", "async"):
                stack[-1].comprehension = True
            if token.type not in (tokenize.NL, tokenize.COMMENT):
                previous = token
    except (tokenize.TokenError, SyntaxError):
        return None
    return None if stack else pairs


def _trailing_comma(pair: _Pair) -> bool:
    """Whether a comma after the last element changes nothing: not in a subscript
    (`x[a,]` is `x[(a,)]`) nor in parentheses that group one expression (`(a,)` is a
    tuple), nor after a generator argument."""
    before = pair.before
    follows_value = before is not None and (
        (before.type == tokenize.NAME and not keyword.iskeyword(before.string))
        or before.string in (")", "]", "}")
        or before.type == tokenize.STRING
    )
    if pair.opener == "[":
        return not follows_value  # a list display, not a subscript
    if pair.opener == "(" and not follows_value:
        return bool(pair.commas)  # a tuple, not grouping parentheses
    return True


def _split_line(lines: list[str], i: int, pairs: list[_Pair], limit: int) -> list[str] | None:
    """The lines that replace `lines[i]`, split inside the outermost bracket pair that
    opens and closes on it, or None where there is none."""
    row = i + 1
    line = lines[i]
    text = line.rstrip("\r\n")
    ending = line[len(text) :]
    inner_ending = ending or "\n"
    on_line = [
        p
        for p in pairs
        if p.start[0] == row and p.end[0] == row and text[p.start[1] + 1 : p.end[1]].strip()
    ]
    outer = [
        p
        for p in on_line
        if not any(q is not p and q.start < p.start and p.end < q.end for q in on_line)
    ]
    if not outer:
        return None
    pair = max(outer, key=lambda p: (p.end[1] - p.start[1], -p.start[1]))
    indent = text[: len(text) - len(text.lstrip(" \t"))]
    if "\t" in indent:
        return None
    inner = indent + _INDENT
    opened, closed = pair.start[1], pair.end[1]
    head = text[: opened + 1].rstrip()
    body = text[opened + 1 : closed].strip()
    tail = text[closed:]
    hugged = [head + inner_ending, inner + body + inner_ending, indent + tail + ending]
    commas = [c[1] for c in pair.commas if c[0] == row]
    if width(hugged[1]) <= limit or not commas or pair.comprehension:
        return hugged
    elements, start = [], opened + 1
    for comma in commas:
        elements.append(text[start:comma].strip())
        start = comma + 1
    last = text[start:closed].strip()
    if last:
        elements.append(last)
    separated = [inner + e + "," + inner_ending for e in elements[:-1]]
    final = inner + elements[-1] + ("," if not last or _trailing_comma(pair) else "")
    return [head + inner_ending, *separated, final + inner_ending, indent + tail + ending]


def _join_after(lines: list[str], i: int, limit: int) -> str | None:
    """The line `lines[i]` (which a split just began with a closing bracket) joined with
    the two after it, where it ends with a bracket whose contents are alone on the next
    line and now fit on it: `).to(` + `tl.float32` + `)` is `).to(tl.float32)`, as
    `ruff format` writes it. None where they stay apart (a trailing comma or a comment
    keeps a split, as in `ruff format`)."""
    if i + 2 >= len(lines):
        return None
    head, body, close = (line.rstrip("\r\n") for line in lines[i : i + 3])
    if not head.rstrip().endswith(("(", "[", "{")) or head.rstrip() != head:
        return None
    contents, closer = body.strip(), close.lstrip()
    if not contents or "#" in body or contents.endswith(","):
        return None
    if closer[:1] != _OPENERS[head[-1]]:
        return None
    joined = head + contents + closer
    return joined + lines[i + 2][len(close) :] if len(joined) <= limit else None


def wrap_lines(lines: list[str], long: list[int], limit: int) -> list[str] | None:
    """`lines` (one statement's, each with its terminator) with the lines at the indices
    `long`, and the lines split from them, split inside their brackets until they fit
    `limit` or have no bracket pair left to split. None when nothing was split."""
    lines = list(lines)
    candidates = set(long)
    changed = False
    for _ in range(_MAX_SPLITS):
        target = next((i for i in sorted(candidates) if width(lines[i]) > limit), None)
        if target is None:
            break
        pairs = _pairs("".join(lines))
        if pairs is None:
            break
        split = _split_line(lines, target, pairs, limit)
        if split is None:
            candidates.discard(target)
            continue
        lines[target : target + 1] = split
        last = target + len(split) - 1  # the split's last line, its closing bracket's
        joined = _join_after(lines, last, limit)
        if joined is not None:  # it took the two lines after it
            lines[last : last + 3] = [joined]
        merged = 2 if joined is not None else 0
        candidates = {
            c if c < target else c + len(split) - 1 - merged
            for c in candidates
            if c != target and not target < c <= target + merged
        }
        candidates |= set(range(target, last + 1))
        changed = True
    return lines if changed else None
