"""Precision and recall of the rules on the labelled FLA corpus (../shared/eval).

    MIRROR_ROOT=/path/holding/fla-org+flash-linear-attention python benchmarks/eval_corpus.py

Materialises the labelled files from a flash-linear-attention snapshot, lints them with
`--output-format json`, scores them with the corpus's own score.py and writes the table
to docs/EVAL.md (with the command, version and date). Not part of the test suite: it
needs the fetched repository.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--eval-dir", default=str(ROOT.parent / "shared" / "eval"))
    ap.add_argument(
        "--rules", default="", help="comma-separated codes to score (default: all in scope)"
    )
    ap.add_argument("--out", default=str(ROOT / "docs" / "EVAL.md"))
    args = ap.parse_args()
    eval_dir = Path(args.eval_dir)
    if "MIRROR_ROOT" not in os.environ:
        sys.exit("set MIRROR_ROOT to the folder holding fla-org+flash-linear-attention/repo")
    manifest = eval_dir / "fla_public_cases.json"
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        subprocess.run(["bash", str(eval_dir / "materialize.sh"), str(corpus)], check=True)
        findings = Path(tmp) / "findings.json"
        with open(findings, "w") as fh:
            lint = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "ascend_lint",
                    "--no-cache",
                    "--output-format",
                    "json",
                    str(corpus),
                ],
                stdout=fh,
                cwd=ROOT,
            )
        if lint.returncode not in (0, 1):
            sys.exit(f"ascend-lint failed with exit code {lint.returncode}")
        score_cmd = [sys.executable, str(eval_dir / "score.py"), str(findings), str(manifest), "-v"]
        if args.rules:
            score_cmd += ["--rules", args.rules]
        score = subprocess.run(score_cmd, capture_output=True, text=True)
        n_findings = len(json.loads(findings.read_text()))
    from ascend_lint import __version__

    table = score.stdout.strip()
    from ascend_lint.rules import ALL_RULES

    listed = {line.split()[0] for line in table.splitlines() if line.startswith("ASC")}
    missing = [r.code for r in ALL_RULES if r.code not in listed and r.code != "ASC000"]
    absent_note = (
        f"Rules without a row ({', '.join(missing)}) had no labelled positives in this split "
        "and made no in-scope report: their clean controls stayed clean."
        if missing
        else ""
    )
    text = f"""# Rules on the labelled FLA corpus

`score.py` output for the public split of `../shared/eval` ({n_findings} findings reported).
Recall = matched expected findings / expected findings; `fp` counts reports that match
no expected or ambiguous label (see `../shared/eval/README.md` for the conventions).
{absent_note}

```
{table}
```

* command: `MIRROR_ROOT=<mirror root> python benchmarks/eval_corpus.py{" --rules " + args.rules if args.rules else ""}`
* ascend-lint {__version__}, Python {sys.version.split()[0]}, {datetime.date.today().isoformat()}
"""
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
