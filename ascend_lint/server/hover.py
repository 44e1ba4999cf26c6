"""What hovering shows: on a finding, the rule's summary, why it matters, the reference
kernel to copy (with its code and a link to it) and a link to the rule's doc; on a code
of a `# noqa: ...` comment, the same for that code's rule."""

from __future__ import annotations

from ascend_lint.diagnostics import Diagnostic, Position
from ascend_lint.docs import Reference, rule_doc_section, rule_references, rule_url
from ascend_lint.rules import RULES_BY_CODE
from ascend_lint.source import SourceFile
from ascend_lint.suppression import noqa_code_spans

# A hover is read at a glance: the start of the kernel is shown, the link opens it all.
KERNEL_LINES = 30


def hover_markdown(diagnostic: Diagnostic) -> str:
    rule = RULES_BY_CODE.get(diagnostic.code)
    title = f"**{diagnostic.code}** `{diagnostic.name}`"
    parts = [f"{title}: {rule.summary}" if rule is not None else title, diagnostic.message]
    parts += _about(diagnostic.code)
    if diagnostic.fix is not None:
        kind = diagnostic.fix.applicability.value
        parts.insert(-1, f"**Fix ({kind}):** {diagnostic.fix.message}")
    return "\n\n".join(parts)


def rule_markdown(code: str) -> str:
    """A rule named in a `# noqa` comment (Ruff shows its rules' summaries there too)."""
    rule = RULES_BY_CODE[code]
    parts = [f"**{code}** `{rule.name}`: {rule.summary}"]
    if rule.fix_applicability is not None:
        parts.append(f"**Fix:** {rule.fix_applicability.value}")
    return "\n\n".join(parts + _about(code))


def noqa_code_at(source: SourceFile, at: Position) -> tuple[str, Position, Position] | None:
    """The rule code of a `# noqa: ...` comment under `at`, with its span."""
    for code, start, end in noqa_code_spans(source.line(at.row)):
        if start <= at.column <= end and code in RULES_BY_CODE:
            return code, Position(at.row, start), Position(at.row, end)
    return None


def _about(code: str) -> list[str]:
    """Why the rule matters, its reference kernel functions and its doc's link."""
    parts = []
    why = rule_doc_section(code, "Why is this bad?")
    if why:
        parts.append(f"**Why:** {why}")
    parts += [_reference(ref) for ref in rule_references(code)]
    parts.append(f"[{code} documentation]({rule_url(code)})")
    return parts


def _reference(ref: Reference) -> str:
    found = ref.source()
    name = ref.function
    if found is None:
        return f"**Reference kernel:** [`{name}`]({ref.url})"
    path, line, code = found
    lines = code.splitlines()
    shown = "\n".join(lines[:KERNEL_LINES])
    more = len(lines) - KERNEL_LINES
    if more > 0:
        shown += f"\n# ... {more} more lines"
    link = f"{path.as_uri()}#L{line}"
    return f"**Reference kernel:** [`{name}`]({link})\n\n```python\n{shown}\n```"
