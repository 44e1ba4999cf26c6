"""What hovering a finding shows: the rule's summary, why it matters, the reference
kernel to copy (with its code and a link to it) and a link to the rule's doc."""

from __future__ import annotations

from ascend_lint.diagnostics import Diagnostic
from ascend_lint.docs import (
    reference_function,
    reference_source,
    reference_url,
    rule_doc_section,
    rule_url,
)
from ascend_lint.rules import RULES_BY_CODE

# A hover is read at a glance: the start of the kernel is shown, the link opens it all.
KERNEL_LINES = 30


def hover_markdown(diagnostic: Diagnostic) -> str:
    rule = RULES_BY_CODE.get(diagnostic.code)
    title = f"**{diagnostic.code}** `{diagnostic.name}`"
    parts = [f"{title}: {rule.summary}" if rule is not None else title, diagnostic.message]
    why = rule_doc_section(diagnostic.code, "Why is this bad?")
    if why:
        parts.append(f"**Why:** {why}")
    reference = diagnostic.reference or (rule.reference if rule is not None else None)
    if reference:
        parts.append(_reference(reference))
    if diagnostic.fix is not None:
        kind = diagnostic.fix.applicability.value
        parts.append(f"**Fix ({kind}):** {diagnostic.fix.message}")
    parts.append(f"[{diagnostic.code} documentation]({rule_url(diagnostic.code)})")
    return "\n\n".join(parts)


def _reference(reference: str) -> str:
    found = reference_source(reference)
    name = reference_function(reference)
    if found is None:
        return f"**Reference kernel:** [`{name}`]({reference_url(reference)})"
    path, line, code = found
    lines = code.splitlines()
    shown = "\n".join(lines[:KERNEL_LINES])
    more = len(lines) - KERNEL_LINES
    if more > 0:
        shown += f"\n# ... {more} more lines"
    link = f"{path.as_uri()}#L{line}"
    return f"**Reference kernel:** [`{name}`]({link})\n\n```python\n{shown}\n```"
