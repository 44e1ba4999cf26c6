"""Engine results as the LSP's JSON (plain dicts, camelCase keys): diagnostics, ranges,
text edits and code actions."""

from __future__ import annotations

from ascend_lint.add_noqa import with_codes
from ascend_lint.diagnostics import Applicability, Diagnostic, Edit, Position
from ascend_lint.docs import rule_url
from ascend_lint.rules import SYNTAX_ERROR_CODE, UNUSED_NOQA_CODE
from ascend_lint.server.buffers import LintedBuffer, changes_text, noqa_row
from ascend_lint.server.positions import to_client

SOURCE = "ascend-lint"
QUICK_FIX = "quickfix"
FIX_ALL_KIND = "source.fixAll.ascend-lint"
CODE_ACTION_KINDS = [QUICK_FIX, FIX_ALL_KIND]
# DiagnosticSeverity and DiagnosticTag
ERROR, WARNING = 1, 2
UNNECESSARY = 1


def lsp_range(buffer: LintedBuffer, start: Position, end: Position, encoding: str) -> dict:
    lines = buffer.source.lines
    s_line, s_char = to_client(lines, start, encoding)
    e_line, e_char = to_client(lines, end, encoding)
    return {
        "start": {"line": s_line, "character": s_char},
        "end": {"line": e_line, "character": e_char},
    }


def _visible_span(buffer: LintedBuffer, d: Diagnostic) -> tuple[Position, Position]:
    """An empty span (a syntax error's point) widened to the character there, so the
    editor has something to underline."""
    if d.start != d.end:
        return d.start, d.end
    line = buffer.source.line(d.start.row)
    if d.start.column < len(line):
        return d.start, Position(d.start.row, d.start.column + 1)
    if d.start.column > 0:
        return Position(d.start.row, d.start.column - 1), d.start
    return d.start, d.end


def lsp_diagnostic(buffer: LintedBuffer, d: Diagnostic, encoding: str) -> dict:
    start, end = _visible_span(buffer, d)
    diagnostic = {
        "range": lsp_range(buffer, start, end, encoding),
        "message": d.message,
        "severity": ERROR if d.code == SYNTAX_ERROR_CODE else WARNING,
        "code": d.code,
        "codeDescription": {"href": rule_url(d.code)},
        "source": SOURCE,
        "data": {
            "name": d.name,
            "fix": d.fix.applicability.value if d.fix is not None else None,
        },
    }
    if d.code == UNUSED_NOQA_CODE:
        diagnostic["tags"] = [UNNECESSARY]
    return diagnostic


def lsp_diagnostics(buffer: LintedBuffer, encoding: str) -> list[dict]:
    return [lsp_diagnostic(buffer, d, encoding) for d in buffer.diagnostics]


def _text_edit(buffer: LintedBuffer, edit: Edit, encoding: str) -> dict:
    return {"range": lsp_range(buffer, edit.start, edit.end, encoding), "newText": edit.content}


def _workspace_edit(uri: str, buffer: LintedBuffer, edits: list[dict], versioned: bool) -> dict:
    if versioned:
        document = {"uri": uri, "version": buffer.version}
        return {"documentChanges": [{"textDocument": document, "edits": edits}]}
    return {"changes": {uri: edits}}


def _overlaps(d: Diagnostic, start: Position, end: Position) -> bool:
    return d.start <= end and start <= d.end


def wanted(kind: str, only: list[str] | None) -> bool:
    """`only: ["source.fixAll"]` asks for that kind and the kinds below it."""
    return only is None or any(kind == k or kind.startswith(f"{k}.") for k in only)


def asked_for(kind: str, only: list[str] | None) -> bool:
    """`only` names `kind` or a kind above it (`source`): asked for, not just allowed."""
    return only is not None and wanted(kind, only)


def findings_for(
    buffer: LintedBuffer,
    start: Position,
    end: Position,
    context: list[dict],
    encoding: str,
) -> list[Diagnostic]:
    """The findings a code action request is about: those under the requested range
    and those the client lists in its context (Neovim sends a line's diagnostics when
    asked from any column of it; VS Code the ones at the cursor), matched by code and
    range as this server published them."""
    listed: dict[str, set[tuple[int, int, int, int]]] = {}
    for c in context:
        if not isinstance(c, dict):
            continue
        code = c.get("code")
        if c.get("source") in (None, SOURCE) and isinstance(code, str):
            listed.setdefault(code, set()).add(_span_of(c.get("range")))
    found = []
    for d in buffer.diagnostics:
        if _overlaps(d, start, end):
            found.append(d)
        elif d.code in listed:
            r = lsp_range(buffer, *_visible_span(buffer, d), encoding)
            if _span_of(r) in listed[d.code]:
                found.append(d)
    return found


def _span_of(r: object) -> tuple | None:
    try:
        return (
            r["start"]["line"],
            r["start"]["character"],
            r["end"]["line"],
            r["end"]["character"],
        )
    except (KeyError, TypeError):  # not a range: matches nothing
        return None


def quick_fixes(
    uri: str,
    buffer: LintedBuffer,
    findings: list[Diagnostic],
    encoding: str,
    versioned: bool,
) -> list[dict]:
    """Each finding's own fix (safe ones preferred, unsafe ones labelled, display-only
    ones not offered) and its `# noqa` action, as Ruff offers them."""
    actions: list[dict] = []
    for d in findings:
        shown = [lsp_diagnostic(buffer, d, encoding)]
        fix = d.fix
        if (
            fix is not None
            and fix.applicability != Applicability.DISPLAY_ONLY
            and changes_text(buffer, fix)
        ):
            safe = fix.applicability == Applicability.SAFE
            edits = [_text_edit(buffer, e, encoding) for e in fix.edits]
            actions.append(
                {
                    "title": f"{d.code}: {fix.message}" + ("" if safe else " (unsafe fix)"),
                    "kind": QUICK_FIX,
                    "diagnostics": shown,
                    "isPreferred": safe,
                    "edit": _workspace_edit(uri, buffer, edits, versioned),
                }
            )
        if d.code in (SYNTAX_ERROR_CODE, UNUSED_NOQA_CODE):
            continue  # a broken file takes no comment; an unused noqa is not silenced
        row = noqa_row(buffer, d)
        if row is None:
            continue
        line = buffer.source.line(row)
        edit = Edit(Position(row, 0), Position(row, len(line)), with_codes(line, {d.code}))
        actions.append(
            {
                "title": f"{d.code}: Suppress with `# noqa: {d.code}`",
                "kind": QUICK_FIX,
                "diagnostics": shown,
                "edit": _workspace_edit(
                    uri, buffer, [_text_edit(buffer, edit, encoding)], versioned
                ),
            }
        )
    return actions


def fix_all_title(unsafe: bool, count: int | None = None) -> str:
    what = "safe and unsafe" if unsafe else "safe"
    if count is None:
        return f"ascend-lint: Fix all {what}"
    return f"ascend-lint: Fix all {what} ({count} {'fix' if count == 1 else 'fixes'})"


def has_fixes(buffer: LintedBuffer) -> bool:
    """Whether fix-all can change anything (without working it out)."""
    allowed = {Applicability.SAFE}
    if buffer.resolved.settings.unsafe_fixes:
        allowed.add(Applicability.UNSAFE)
    return any(d.fix is not None and d.fix.applicability in allowed for d in buffer.diagnostics)


def lazy_fix_all_action(uri: str, buffer: LintedBuffer) -> dict:
    """Fix-all without its edit, for `codeAction/resolve` to fill in when chosen."""
    return {
        "title": fix_all_title(buffer.resolved.settings.unsafe_fixes),
        "kind": FIX_ALL_KIND,
        "data": {"uri": uri, "version": buffer.version},
    }


def fix_all_action(
    uri: str, buffer: LintedBuffer, encoding: str, versioned: bool, fixed: tuple
) -> dict | None:
    """The fix-all action from `fix_all_text`'s result (worked out off the event loop)."""
    text, count, _error = fixed
    if text is None:
        return None
    edit = _minimal_edit(buffer, text)
    return {
        "title": fix_all_title(buffer.resolved.settings.unsafe_fixes, count),
        "kind": FIX_ALL_KIND,
        "edit": _workspace_edit(uri, buffer, [_text_edit(buffer, edit, encoding)], versioned),
    }


def _minimal_edit(buffer: LintedBuffer, fixed: str) -> Edit:
    """One edit that turns the buffer into `fixed`, spanning only what differs (the
    editor keeps cursors and folds outside it)."""
    old = buffer.text
    limit = min(len(old), len(fixed))
    prefix = _common_length(old, fixed, limit, lambda text, n: text[:n])
    suffix = _common_length(
        old, fixed, limit - prefix, lambda text, n: text[len(text) - n :] if n else ""
    )
    # Never cut a CRLF in two: a position between CR and LF does not exist in the LSP.
    if 0 < prefix < len(old) and old[prefix - 1] == "\r" and old[prefix] == "\n":
        prefix -= 1
    if suffix and old[len(old) - suffix] == "\n" and len(old) - suffix > prefix:
        if old[len(old) - suffix - 1] == "\r":
            suffix -= 1
    start = buffer.source.position_of(prefix)
    end = buffer.source.position_of(len(old) - suffix)
    return Edit(start, end, fixed[prefix : len(fixed) - suffix])


def _common_length(a: str, b: str, limit: int, part) -> int:
    """The longest `n <= limit` with `part(a, n) == part(b, n)` (a common prefix or
    suffix), by bisection: slices compare in C, where a loop over the characters of a
    big file would hold the event loop for a tenth of a second."""
    lo, hi = 0, limit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if part(a, mid) == part(b, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
