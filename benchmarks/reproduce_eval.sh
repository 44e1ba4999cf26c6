#!/usr/bin/env bash
# Reproduce the accuracy table of docs/EVAL.md in one command: clone the public
# repositories the labels pin, write out the labelled files, lint and score them.
#
#   usage: benchmarks/reproduce_eval.sh [ROOT] [MANIFEST.json ...]
#
# ROOT (default: ./ascend-lint-eval) receives one bare clone per repository, laid out
# <owner>+<name>/repo; a clone already there is reused (and fetched if a pinned commit
# is missing). MANIFEST defaults to every benchmarks/corpus/*_cases.json. Clones come
# from https://github.com/<owner>/<name>; set ASCEND_LINT_EVAL_CLONE_FROM to a folder
# laid out like ROOT to clone from local copies instead (no network).
# Needs git, bash and this repository installed (`pip install -e .`), run from anywhere.
# Prints score.py's table per manifest (with every miss and false positive); exits 1
# when a manifest falls short of docs/EVAL.md's gate, 2 when something could not run.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CORPUS="$HERE/corpus"
ROOT=${1:-./ascend-lint-eval}
[[ $# -gt 0 ]] && shift
if [[ $# -gt 0 ]]; then MANIFESTS=("$@"); else MANIFESTS=("$CORPUS"/*_cases.json); fi
PYTHON=${PYTHON:-python3}
command -v git >/dev/null || { echo "error: git is required" >&2; exit 2; }
"$PYTHON" -m ascend_lint --version >/dev/null 2>&1 || {
  echo "error: ascend-lint is not importable by $PYTHON; run \`pip install -e .\` in this repository first" >&2
  exit 2
}
for m in "${MANIFESTS[@]}"; do
  [[ -f "$m" ]] || { echo "error: manifest not found: $m" >&2; exit 2; }
done
mkdir -p "$ROOT"
ROOT=$(cd "$ROOT" && pwd)

# repository <TAB> commit, one line per pinned commit of the manifests
pins=$("$PYTHON" - "${MANIFESTS[@]}" <<'PY'
import json, sys
seen = set()
for m in sys.argv[1:]:
    for s in json.load(open(m)):
        seen.add((s["repo"], s["commit"]))
for repo, commit in sorted(seen):
    print(f"{repo}\t{commit}")
PY
)

while IFS=$'\t' read -r repo commit; do
  dest="$ROOT/${repo/\//+}/repo"
  if [[ -n "${ASCEND_LINT_EVAL_CLONE_FROM:-}" ]]; then
    source="$ASCEND_LINT_EVAL_CLONE_FROM/${repo/\//+}/repo"
  else
    source="https://github.com/$repo"
  fi
  if [[ ! -d "$dest" ]]; then
    echo "cloning $repo from $source" >&2
    git clone --quiet --bare "$source" "$dest" || { echo "error: cannot clone $source" >&2; exit 2; }
  fi
  if ! git -C "$dest" cat-file -e "${commit}^{commit}" 2>/dev/null; then
    echo "fetching $repo: commit $commit is not in $dest yet" >&2
    git -C "$dest" fetch --quiet "$source" "+refs/heads/*:refs/heads/*" || true
    git -C "$dest" cat-file -e "${commit}^{commit}" 2>/dev/null || {
      echo "error: commit $commit of $repo is not in $source" >&2
      exit 2
    }
  fi
done <<< "$pins"

status=0
work=$(mktemp -d "${TMPDIR:-/tmp}/ascend-lint-eval.XXXXXX")
trap 'rm -rf "$work"' EXIT
for m in "${MANIFESTS[@]}"; do
  name=$(basename "$m" .json)
  out="$work/$name"
  MIRROR_ROOT="$ROOT" bash "$CORPUS/materialize.sh" "$out" "$m" >&2 || exit 2
  # Exit 1 only says that there are findings; 2 is an error.
  set +e
  "$PYTHON" -m ascend_lint check --no-cache --output-format json "$out" > "$work/$name.findings.json"
  lint=$?
  set -e
  [[ $lint -le 1 ]] || { echo "error: ascend-lint exited $lint on $name" >&2; exit 2; }
  echo "## $name"
  set +e
  "$PYTHON" "$CORPUS/score.py" "$work/$name.findings.json" "$m" -v \
    --min-recall 0.9 --min-precision 0.9 --min-pos 5 --max-fp-small 0
  scored=$?
  set -e
  [[ $scored -le 1 ]] || { echo "error: score.py exited $scored on $name" >&2; exit 2; }
  [[ $scored -eq 0 ]] || status=1
  echo
done
exit $status
