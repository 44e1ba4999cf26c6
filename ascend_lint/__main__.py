from ascend_lint.cli import run_console

run_console()
