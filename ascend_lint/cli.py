"""Command line: Ruff's names and exit codes, so habits and CI snippets carry over.

    ascend-lint [check] PATHS...   lint (the default command); more commands: `ascend-lint help`

The subcommands are one table (`_commands`): dispatch, `--help`, `help <command>` and
the suggestion for a mistyped command all read it. Exit codes: 0 no findings, 1
findings, 2 usage, configuration or internal error. Heavy modules are imported lazily
so `--version` and `--help` stay fast.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from ascend_lint import __version__
from ascend_lint.text import plural
from ascend_lint.usage import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UsageParser


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"`{text}`: at least one worker is needed")
    return value


def _check_parser() -> argparse.ArgumentParser:
    from ascend_lint.reporters import COLOR_CHOICES, OUTPUT_FORMATS

    p = UsageParser(
        prog="ascend-lint check", description="Lint Triton kernels for Ascend NPU anti-patterns."
    )
    p.add_argument(
        "paths",
        nargs="*",
        help="files or folders to lint (default: .); `-` reads the source from standard input",
    )
    p.add_argument(
        "--stdin-filename",
        metavar="NAME",
        help="lint standard input as if it were the file NAME (its config, per-file-ignores, "
        "excludes and name in the findings); with --fix the fixed source goes to stdout",
    )
    p.add_argument(
        "--select",
        action="append",
        help="rule codes or prefixes to enable, comma-separated (ALL for every rule); "
        "repeat to combine",
    )
    p.add_argument(
        "--extend-select",
        action="append",
        help="codes or prefixes to enable on top of the selection",
    )
    p.add_argument(
        "--ignore", action="append", help="codes or prefixes to disable, comma-separated"
    )
    p.add_argument(
        "--per-file-ignores",
        action="append",
        metavar="GLOB:CODES",
        help="ignore codes in files matching a glob, e.g. `tests/*:ASC004,ASC007`",
    )
    p.add_argument(
        "--exclude", action="append", help="globs to exclude, replacing the default excludes"
    )
    p.add_argument(
        "--extend-exclude", action="append", help="globs to exclude on top of the excludes"
    )
    p.add_argument("--fixable", action="append", help="codes whose fixes may be applied")
    p.add_argument("--unfixable", action="append", help="codes whose fixes are never applied")
    p.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        help="how findings are printed (default: full)",
    )
    p.add_argument(
        "--target",
        help="the SoC whose Unified Buffer budget ASC022 checks (default: ascend910b; "
        "ascend910_93, ascend910_95 and aliases such as a2, a3, a5)",
    )
    p.add_argument(
        "--triton-ascend",
        metavar="VERSION",
        help="the triton-ascend release the code compiles with (default: 3.2.0); rules "
        "whose trap a later release fixed report only for earlier ones",
    )
    p.add_argument("-o", "--output-file", help="write the report to this file instead of stdout")
    p.add_argument(
        "--color",
        choices=COLOR_CHOICES,
        default="auto",
        help="colour the text formats: auto (default) on a terminal, unless NO_COLOR is set",
    )
    p.add_argument("--fix", action="store_true", default=None, help="apply safe fixes")
    p.add_argument("--no-fix", dest="fix", action="store_false", help="do not apply fixes")
    p.add_argument(
        "--unsafe-fixes", action="store_true", default=None, help="also apply unsafe fixes"
    )
    p.add_argument(
        "--no-unsafe-fixes",
        dest="unsafe_fixes",
        action="store_false",
        help="never apply unsafe fixes",
    )
    p.add_argument(
        "--diff",
        action="store_true",
        help="print the diff --fix would apply; write nothing (exit 1 if any)",
    )
    p.add_argument("--show-fixes", action="store_true", help="list the fixes that were applied")
    p.add_argument(
        "--exit-non-zero-on-fix",
        action="store_true",
        help="exit 1 when a fix was applied, even if nothing remains",
    )
    p.add_argument(
        "-e", "--exit-zero", action="store_true", help="exit 0 even when findings remain"
    )
    p.add_argument("-n", "--no-cache", action="store_true", help="do not read or write the cache")
    p.add_argument(
        "--show-files", action="store_true", help="list the files that would be linted, then exit"
    )
    p.add_argument(
        "--cache-dir", help="cache folder (default: .ascend_lint_cache next to pyproject.toml)"
    )
    p.add_argument(
        "--statistics", action="store_true", help="print a count per rule instead of each finding"
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    p.add_argument(
        "-s",
        "--silent",
        action="store_true",
        help="print nothing; the exit code still says whether findings remain",
    )
    p.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply excludes to paths named on the command line too",
    )
    p.add_argument(
        "--config",
        action="append",
        metavar="PATH|KEY=VALUE",
        help="a pyproject.toml to use instead of the nearest one, or a TOML `KEY = VALUE` "
        "override of one setting (repeatable), e.g. --config 'ignore = [\"ASC004\"]'",
    )
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    p.add_argument(
        "--respect-gitignore",
        dest="respect_gitignore",
        action="store_true",
        default=None,
        help="skip files the work tree's .gitignore files ignore (the default)",
    )
    p.add_argument(
        "--no-respect-gitignore",
        dest="respect_gitignore",
        action="store_false",
        help="lint files even if .gitignore ignores them",
    )
    p.add_argument(
        "--show-settings",
        action="store_true",
        help="print the settings in force for the first path, then exit",
    )
    p.add_argument(
        "--ignore-noqa",
        action="store_true",
        help="report findings that `# noqa` comments would silence (fixes still respect them)",
    )
    p.add_argument(
        "--add-noqa",
        action="store_true",
        help="write a `# noqa: CODE` on the line of every finding (to adopt the tool on an "
        "existing tree), then exit",
    )
    p.add_argument(
        "--fix-only",
        action="store_true",
        help="apply fixes and report only what was fixed, not what remains",
    )
    p.add_argument(
        "-w",
        "--watch",
        action="store_true",
        help="run again whenever a Python file or the configuration changes (Ctrl-C stops)",
    )
    p.add_argument(
        "-v", "--verbose", action="store_true", help="say what is read and how long it takes"
    )
    p.add_argument(
        "-j",
        "--jobs",
        type=_positive_int,
        default=None,
        help=(
            "worker processes (default: one per core, 8 at most); with few files, a "
            "module of 1 MiB or more is linted in parts by up to 3 of them"
        ),
    )
    return p


def run_console() -> None:
    """The `ascend-lint` script: run, then exit with its code. A Ctrl-C that arrives once
    the work is done, while the interpreter waits for the worker pool's threads on its way
    out, would otherwise surface as a threading traceback and exit status 1: from here on
    it ends the process at once with 130, as during the run."""
    code = main()
    signal.signal(signal.SIGINT, _exit_interrupted)
    sys.exit(code)


def _exit_interrupted(signum, frame) -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(130)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # File names that are not UTF-8 arrive with surrogate escapes: show them escaped
    # rather than fail while printing the report.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        if argv and argv[0] in ("--version", "-V"):
            argv[0] = "version"
        if argv and argv[0] in ("-h", "--help"):
            argv[0] = "help"
        commands = _commands()
        if argv and argv[0] in commands:
            return commands[argv[0]][1](argv[1:])
        mistyped = _mistyped_command(argv[0]) if argv else None
        if mistyped:
            sys.stderr.write(
                f"error: unknown command `{argv[0]}` (and no such file or folder); "
                f"did you mean `{mistyped}`? `ascend-lint help` lists the commands\n"
            )
            return EXIT_ERROR
        return _check_command(argv)
    except SystemExit as exc:  # argparse: --help (0) and usage errors (2)
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    except BrokenPipeError:
        return EXIT_CLEAN


def _commands() -> dict[str, tuple[str, Callable[[list[str]], int]]]:
    """Every subcommand: name -> (one line for `--help`, handler of the rest of argv).
    `--help`, `help <command>` and the "did you mean" of a mistyped command read it."""
    return {
        "check": ("lint files and folders (the default command)", _check_command),
        "rule": ("explain a rule and show its reference kernel", _rule_command),
        "server": ("language server (LSP) over stdio, for editors", _server_command),
        "compile": (
            "lower one kernel specialisation for Ascend on CPU: does it fit the Unified Buffer?",
            _compile_command,
        ),
        "clean": ("remove the cache of the current project", _clean_command),
        "version": ("print the version", _version_command),
        "help": ("this help, or a command's: `help <command>`", _help_command),
    }


def _compile_command(argv: list[str]) -> int:
    from ascend_lint.compile_command import main as compile_main

    return compile_main(argv)


def _version_command(argv: list[str]) -> int:
    UsageParser(prog="ascend-lint version", description="Print the version.").parse_args(argv)
    print(f"ascend-lint {__version__}")
    return EXIT_CLEAN


def _help_command(argv: list[str]) -> int:
    if not argv:
        _print_help()
        return EXIT_CLEAN
    commands = _commands()
    name = argv[0]
    if name not in commands or len(argv) > 1:
        import difflib

        hint = difflib.get_close_matches(name, list(commands), n=1)
        sys.stderr.write(
            f"error: unknown command `{' '.join(argv)}`"
            + (f"; did you mean `{hint[0]}`?" if hint and len(argv) == 1 else "")
            + f"\nthe commands: {', '.join(commands)}\n"
        )
        return EXIT_ERROR
    if name == "help":
        _print_help()
        return EXIT_CLEAN
    return commands[name][1](["--help"])  # `ascend-lint help check`, as Ruff's


def _mistyped_command(word: str) -> str | None:
    """The command `word` was probably meant to be (`chek`), when it is no option, no
    path that exists and close to a command's name."""
    if word.startswith("-") or os.path.lexists(word) or os.sep in word or "." in word:
        return None
    import difflib

    hint = difflib.get_close_matches(word, list(_commands()), n=1, cutoff=0.75)
    return hint[0] if hint else None


def _print_help() -> None:
    print(
        "Finds Triton kernel habits that are slow or wrong on Huawei Ascend NPUs.\n\n"
        "usage: ascend-lint [COMMAND] [OPTIONS] [PATHS...]   (no command: check)"
    )
    print("\nCommands:")
    commands = _commands()
    width = max(map(len, commands))
    for name, (summary, _handler) in commands.items():
        print(f"  {name:<{width}}  {summary}")
    print(
        "\nExit codes: 0 no findings, 1 findings, 2 usage, configuration or internal error."
        "\n`ascend-lint help <command>` shows a command's options; those of `check`:\n"
    )
    _check_parser().print_help()


def _check_command(argv: list[str], watching: bool = False) -> int:
    """`ascend-lint check`; `watching`: one run of `--watch` (which calls this again).
    Stages: where the source comes from, the settings, the lint (with fixes), then what
    is written (fixed files, a diff, noqa comments) and the report."""
    parser = _check_parser()
    args = parser.parse_args(argv)
    stdin_name = _stdin_name(args, parser)
    args.paths = args.paths or ["."]
    if args.watch and not watching:
        if stdin_name is not None:
            parser.error("--watch reads files, it cannot take standard input")
        if args.add_noqa:
            parser.error("--watch cannot be combined with --add-noqa")
        return _watch(argv, args.paths)
    from ascend_lint.settings import ConfigError

    try:
        settings = _check_settings(args, stdin_name)
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_ERROR
    if args.show_settings:
        _show_settings(settings)
        return EXIT_CLEAN
    if args.fix_only:
        args.fix = True
    fixing_wanted = bool(args.diff or (args.fix if args.fix is not None else settings.fix))
    started = time.perf_counter()

    # -- lint (and fix, in the same worker) -----------------------------------------------
    source = None
    read: dict[str, bytes] = {}
    if stdin_name is not None:
        from ascend_lint.session import lint_buffer

        source = _read_stdin()
        result = lint_buffer(
            stdin_name,
            source,
            settings,
            ignore_noqa=args.ignore_noqa,
            force_exclude=args.force_exclude,
            fix=fixing_wanted and not args.add_noqa,
        )
        results = [result] if result is not None else []
        n_files, path_errors = len(results), []
    else:
        from ascend_lint.discovery import discover
        from ascend_lint.runner import lint_files

        found = discover(args.paths, settings, force_exclude=args.force_exclude)
        for message in found.warnings:
            sys.stderr.write(f"warning: {message}\n")
        for message in found.errors:
            sys.stderr.write(f"error: {message}\n")
        if args.show_files:
            for f in sorted(found.files, key=Path):  # by path components, as Ruff lists
                print(f)
            return EXIT_ERROR if found.errors else EXIT_CLEAN
        results, read = lint_files(
            found.files,
            settings,
            jobs=args.jobs,
            cache=_open_cache(args, settings),
            ignore_noqa=args.ignore_noqa,
            fix=fixing_wanted and not args.add_noqa,
        )
        n_files, path_errors = len(found.files), found.errors
    internal = [r.error and f"{r.path}: {r.error}" for r in results if r.error]
    if args.add_noqa:
        return _add_noqa_command(results, path_errors, internal, quiet=args.quiet or args.silent)

    # -- what the fixes write ---------------------------------------------------------------
    fixing = None
    if fixing_wanted:
        from ascend_lint.fix_command import write_fixes

        fixing = write_fixes(results, read, diff=args.diff, stdin=source)
        internal += fixing.errors
        if source is not None and not args.diff:
            # The fixed source (the input itself when nothing was fixed, excluded or a
            # fix failed) is all that goes to stdout; the report goes to stderr.
            _write_bytes(fixing.output if fixing.output is not None else source)
        if args.diff:
            return _diff_report(fixing, path_errors, internal)
    diagnostics = sorted((d for r in results for d in r.diagnostics), key=lambda d: d.sort_key())
    for message in internal:
        sys.stderr.write(f"error: {message}\n")
    if args.verbose:
        parsed = sum(1 for r in results if not r.skipped)
        sys.stderr.write(
            f"ascend-lint: {plural(n_files, 'file', grouped=False)} found, {parsed} read as kernel candidates, "
            f"{plural(len(diagnostics), 'finding', grouped=False)}, {time.perf_counter() - started:.2f} s\n"
        )
    if args.fix_only:
        return _fix_only_report(args, fixing, source, path_errors, internal)

    # -- the report -------------------------------------------------------------------------
    written = _report(
        args,
        settings,
        diagnostics,
        n_files,
        fixing,
        source,
        stdin_name,
        errors=bool(path_errors or internal),
    )
    if written is not None:
        return written
    if path_errors or internal:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    if diagnostics or (args.exit_non_zero_on_fix and fixing is not None and fixing.applied):
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _stdin_name(args, parser) -> str | None:
    """Standard input (for editors): `-` as the only path, or --stdin-filename (Ruff's
    rule: it wins over any path given, with a warning)."""
    if args.stdin_filename is not None:
        for path in args.paths or []:
            if path != "-":
                sys.stderr.write(f"warning: ignoring `{path}` in favour of standard input\n")
        return args.stdin_filename
    if args.paths and "-" in args.paths:
        if len(args.paths) > 1:
            parser.error("`-` (standard input) cannot be combined with other paths")
        return "-"
    return None


def _check_settings(args, stdin_name: str | None):
    """The settings in force: the configuration found from the first path (or --config,
    --isolated), with the command line's options on top (`settings.apply_command_line`)."""
    from ascend_lint.settings import ConfigError, apply_command_line, load_settings

    if stdin_name is not None:
        start = Path(stdin_name) if stdin_name != "-" else Path.cwd()
    else:
        start = Path(args.paths[0])
        start = start if start.exists() else Path.cwd()
    config_files = [c for c in args.config or () if "=" not in c or Path(c).is_file()]
    overrides = [c for c in args.config or () if c not in config_files]
    if len(config_files) > 1:
        raise ConfigError("--config takes one configuration file (and any KEY=VALUE)")
    from ascend_lint.settings import apply_overrides

    settings = load_settings(
        Path(config_files[0]) if config_files else None, start, isolated=args.isolated
    )
    apply_overrides(settings, overrides)
    apply_command_line(settings, args)
    if args.statistics and settings.output_format not in _STATISTICS_FORMATS:
        raise ConfigError(
            f"--statistics prints text or JSON, not `{settings.output_format}`: use "
            "--output-format " + " or ".join(_STATISTICS_FORMATS)
        )
    return settings


def _diff_report(fixing, path_errors: list[str], internal: list[str]) -> int:
    _write_bytes(fixing.diff)
    if fixing.would_fix:
        noun = "error" if fixing.would_fix == 1 else "errors"
        sys.stderr.write(f"Would fix {fixing.would_fix} {noun}.\n")
    for message in internal:
        sys.stderr.write(f"error: {message}\n")
    if path_errors or internal:
        return EXIT_ERROR
    return EXIT_FINDINGS if fixing.diff else EXIT_CLEAN


def _fix_only_report(args, fixing, source, path_errors: list[str], internal: list[str]) -> int:
    """Ruff's --fix-only: fix what can be fixed, say so, and leave the rest unreported."""
    applied = len(fixing.applied) if fixing is not None else 0
    if not (args.quiet or args.silent):
        out = sys.stderr if source is not None else sys.stdout
        noun = "error" if applied == 1 else "errors"
        out.write(f"Fixed {applied} {noun}.\n" if applied else "No errors fixed.\n")
    if path_errors or internal:
        return EXIT_ERROR
    return EXIT_FINDINGS if args.exit_non_zero_on_fix and applied else EXIT_CLEAN


def _report(
    args, settings, diagnostics, n_files, fixing, source, stdin_name, *, errors: bool
) -> int | None:
    """Write the findings where they go, in the chosen format; an exit code when the
    report itself cannot be written, else None."""
    from ascend_lint.reporters import REPORTERS, STYLED_FORMATS
    from ascend_lint.reporters.style import style_for

    with contextlib.ExitStack() as stack:
        if args.silent:
            out = stack.enter_context(open(os.devnull, "w"))
        elif args.output_file:
            try:
                target = Path(args.output_file)
                if target.is_dir():
                    raise IsADirectoryError(f"{target} is a directory")
                target.parent.mkdir(parents=True, exist_ok=True)
                out = stack.enter_context(
                    open(target, "w", encoding="utf-8", errors="backslashreplace")
                )
            except OSError as exc:
                reason = exc.strerror or str(exc)
                sys.stderr.write(
                    f"error: cannot write the report to {args.output_file}: {reason}\n"
                )
                return EXIT_ERROR
        elif source is not None and fixing is not None:
            out = sys.stderr  # stdout carries the fixed source
        else:
            out = sys.stdout
        if source is not None:
            # Frames show the text the findings are about: the buffer (not the file of
            # that name on disk), after --fix the fixed buffer.
            from ascend_lint.reporters._common import sources_in_memory

            linted = fixing.output if fixing is not None and fixing.output is not None else source
            stack.enter_context(sources_in_memory({stdin_name: linted}))
        if args.statistics:
            _statistics(diagnostics, out, as_json=settings.output_format == "json")
        else:
            # Rendered in memory and written at once: reporters write token by token
            # (`json.dump`: one write per token), and under PYTHONUNBUFFERED or `-u`
            # each write to stdout is a system call.
            rendered = io.StringIO()
            if settings.output_format in STYLED_FORMATS:
                style = style_for(args.color, out)
                REPORTERS[settings.output_format](diagnostics, rendered, style)
            else:
                REPORTERS[settings.output_format](diagnostics, rendered)
            out.write(rendered.getvalue())
        if fixing is not None and args.show_fixes:
            _show_fixes(fixing.applied, out)
        if not args.quiet and settings.output_format in ("full", "concise") and not args.statistics:
            _summary(
                diagnostics,
                n_files,
                out,
                fixing,
                unsafe_fixes=settings.unsafe_fixes,
                errors=errors,
            )
    return None


# What a change must touch to be worth a new run: sources, and the files that decide
# which sources and which settings (Ruff watches its sources and configuration alike).
_WATCHED_SUFFIXES = (".py", ".pyi")
_WATCHED_NAMES = ("pyproject.toml", ".gitignore")


def _watch(argv: list[str], paths: list[str]) -> int:
    """`--watch`: lint, then lint again on every relevant change until Ctrl-C (exit 0)."""
    try:
        import watchfiles
    except ImportError:
        sys.stderr.write(
            "error: --watch needs the `watchfiles` package, which is not installed: "
            "pip install watchfiles\n"
        )
        return EXIT_ERROR
    roots = [p for p in dict.fromkeys(paths) if Path(p).exists()]
    if not roots:
        sys.stderr.write(f"error: nothing to watch: {', '.join(paths)} does not exist\n")
        return EXIT_ERROR

    class Relevant(watchfiles.DefaultFilter):  # skips .git, __pycache__, editors' swap files
        def __call__(self, change, path: str) -> bool:
            name = os.path.basename(path)
            return super().__call__(change, path) and (
                name.endswith(_WATCHED_SUFFIXES) or name in _WATCHED_NAMES
            )

    def run(header: str) -> None:
        if sys.stdout.isatty():
            sys.stdout.write("\x1b[2J\x1b[H")  # clear the screen, as Ruff does
        print(f"[{time.strftime('%H:%M:%S')}] {header}", flush=True)
        _check_command(argv, watching=True)  # reads the configuration again: it may be what changed
        sys.stderr.flush()
        print(f"[{time.strftime('%H:%M:%S')}] Watching for file changes.", flush=True)

    import queue
    import threading

    # The watcher runs from before the first lint, so an edit made while a run is in
    # progress (or right after it) is never missed; edits during a run coalesce into one.
    changes: queue.Queue = queue.Queue()
    stop = threading.Event()
    started = threading.Event()

    def watch() -> None:
        # yield_on_timeout: the first (empty) batch says the watcher is in place.
        for batch in watchfiles.watch(
            *roots,
            watch_filter=Relevant(),
            stop_event=stop,
            rust_timeout=100,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            started.set()
            if batch:
                changes.put(batch)

    thread = threading.Thread(target=watch, name="ascend-lint-watch", daemon=True)
    thread.start()
    try:
        started.wait(timeout=5)
        run("Starting linter in watch mode...")
        while True:
            try:
                changes.get(timeout=0.5)
            except queue.Empty:
                if not thread.is_alive():
                    sys.stderr.write("error: the file watcher stopped\n")
                    return EXIT_ERROR
                continue
            while not changes.empty():
                changes.get_nowait()
            run("File change detected...")
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
    return EXIT_CLEAN


def _add_noqa_command(results, path_errors, internal, *, quiet: bool) -> int:
    from ascend_lint.add_noqa import add_noqa

    if any(r.path == "-" for r in results):
        sys.stderr.write("error: --add-noqa writes files; it cannot take standard input\n")
        return EXIT_ERROR
    run = add_noqa(results)
    for message in [*internal, *run.errors]:
        sys.stderr.write(f"error: {message}\n")
    if not quiet:
        noun = "directive" if run.added == 1 else "directives"
        print(f"Added {run.added} noqa {noun}.")
    return EXIT_ERROR if (path_errors or internal or run.errors) else EXIT_CLEAN


def _show_settings(settings) -> None:
    """`--show-settings`: what is in force, after configuration files and options."""
    import dataclasses
    import json

    shown = {
        f.name.replace("_", "-"): getattr(settings, f.name)
        for f in dataclasses.fields(settings)
        if not f.name.startswith("_")
    }
    shown["enabled-codes"] = sorted(settings.enabled_codes())
    print(json.dumps(shown, indent=2, default=str))


def _read_stdin() -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is not None:
        return stream.read()
    return sys.stdin.read().encode("utf-8")


def _write_bytes(data: bytes) -> None:
    """Fixed source or a diff, byte for byte: the file's encoding, BOM and line endings."""
    sys.stdout.flush()
    stream = getattr(sys.stdout, "buffer", None)
    if stream is not None:
        stream.write(data)
        stream.flush()
    else:
        from ascend_lint.source import SourceDecodeError, SourceFile

        try:
            sys.stdout.write(SourceFile.from_bytes("-", data).text)
        except SourceDecodeError:
            sys.stdout.write(data.decode("utf-8", errors="replace"))
        sys.stdout.flush()


def _summary(
    diagnostics, n_files: int, out, fixing=None, *, unsafe_fixes: bool = False, errors: bool = False
) -> None:
    fixed = len(fixing.applied) if fixing is not None else 0
    if not diagnostics:
        if errors and not fixed:
            return  # a path or file could not be checked: the errors above say so
        if fixed:
            out.write(
                f"Found {plural(fixed, 'error', grouped=False)} ({fixed} fixed, 0 remaining).\n"
            )
        else:
            out.write("All checks passed!\n")
        return
    found = plural(len(diagnostics) + fixed, "error", grouped=False)
    with_findings = len({d.path for d in diagnostics})
    where = "in 1 file" if n_files == 1 else f"in {with_findings} of {n_files:,} files"
    if fixing is not None:
        out.write(f"Found {found} ({fixed} fixed, {len(diagnostics)} remaining) {where}.\n")
    else:
        out.write(f"Found {found} {where}.\n")
    applicable = [d for d in diagnostics if d.fix]
    safe = sum(1 for d in applicable if d.fix.applicability.value == "safe")
    unsafe = sum(1 for d in applicable if d.fix.applicability.value == "unsafe")
    if unsafe_fixes:
        safe, unsafe = safe + unsafe, 0  # with --unsafe-fixes, --fix applies both
    if safe:
        out.write(f"[*] {safe} fixable with the `--fix` option.\n")
    if unsafe:
        hidden = plural(unsafe, "hidden fix", "hidden fixes", grouped=False)
        out.write(f"({hidden} can be enabled with the `--unsafe-fixes` option.)\n")


def _show_fixes(applied, out) -> None:
    if not applied:
        out.write("No errors fixed.\n")
        return
    by_file: dict[str, Counter] = {}
    for d in applied:
        by_file.setdefault(d.path, Counter())[(d.code, d.name)] += 1
    out.write(f"Fixed {plural(len(applied), 'error', grouped=False)}:\n")
    for path, counts in sorted(by_file.items()):
        out.write(f"- {path}:\n")
        for (code, name), n in sorted(counts.items()):
            out.write(f"    {n} x {code} ({name})\n")


# What --statistics can print: a table (the text formats) or Ruff's JSON list.
_STATISTICS_FORMATS = ("full", "concise", "grouped", "json")


def _statistics(diagnostics, out, as_json: bool = False) -> None:
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix and d.fix.applicability.value == "safe")
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if as_json:  # Ruff's layout
        import json

        rows = [
            {
                "code": code,
                "name": name,
                "count": n,
                "fixable": fixable[code] > 0,
                "fixable_count": fixable[code],
            }
            for (code, name), n in ranked
        ]
        out.write(json.dumps(rows, indent=2) + "\n")
        return
    for (code, name), n in ranked:
        mark = "[*]" if fixable[code] else "   "
        out.write(f"{n:5d}\t{code}\t{mark} {name}\n")


def _rule_command(argv: list[str]) -> int:
    p = UsageParser(
        prog="ascend-lint rule",
        description="Explain a rule and show the reference kernel it points to.",
    )
    p.add_argument("code", nargs="?", help="rule code or name, e.g. ASC001 or strided-time-gather")
    p.add_argument("--all", action="store_true", help="explain every rule")
    p.add_argument("--output-format", choices=("text", "json"), default="text")
    args = p.parse_args(argv)
    from ascend_lint.rules import ALL_RULES, RULES_BY_CODE

    if args.all:
        rules = list(ALL_RULES)
    elif args.code:
        by_name = {r.name: r.code for r in ALL_RULES}
        code = by_name.get(args.code.lower(), args.code.upper())
        if code not in RULES_BY_CODE:
            import difflib

            hint = difflib.get_close_matches(code, list(RULES_BY_CODE), n=1) or (
                difflib.get_close_matches(args.code.lower(), list(by_name), n=1)
            )
            sys.stderr.write(
                f"error: unknown rule `{args.code}`"
                + (f"; did you mean `{hint[0]}`?" if hint else "")
                + "\n"
            )
            return EXIT_ERROR
        rules = [RULES_BY_CODE[code]]
    else:
        p.error("give a rule code or --all")
    from ascend_lint.docs import rule_doc, rule_references, rule_url

    if args.output_format == "json":
        import json

        payload = [
            {
                "code": r.code,
                "name": r.name,
                "summary": r.summary,
                "fix": r.fix_applicability.value if r.fix_applicability else None,
                "url": rule_url(r.code),
                "reference_kernels": [_shown_reference(ref) for ref in rule_references(r.code)],
                "explanation": rule_doc(r.code),
            }
            for r in rules
        ]
        print(json.dumps(payload if args.all else payload[0], indent=2))
        return EXIT_CLEAN
    for i, r in enumerate(rules):
        if i:
            print("\n" + "-" * 80 + "\n")
        doc = rule_doc(r.code)
        print(doc.rstrip() if doc else f"# {r.name} ({r.code})\n\n{r.summary}")
        references = rule_references(r.code)
        if not references:
            continue
        names = ", ".join(ref.function for ref in references)
        print(f"\n## Reference kernel{'s' if len(references) > 1 else ''}: {names}")
        for ref in references:
            shown = _shown_reference(ref)
            if shown["source"] is None:
                print(
                    f"\n`{ref.function}` (the reference kernels are not installed next to this "
                    f"copy of ascend-lint: {ref.url})"
                )
            else:
                print(f"\n```python\n# {ref.path}:{shown['line']}\n{shown['source']}\n```")
    return EXIT_CLEAN


def _shown_reference(ref) -> dict:
    """A reference function as `ascend-lint rule` shows it: where it is in the installed
    package, and its code (None where the kernels are not installed)."""
    found = ref.source()
    return {
        **ref.as_json(),
        "line": found[1] if found else None,
        "source": found[2] if found else None,
        "url": ref.url,
    }


def _server_command(argv: list[str]) -> int:
    p = UsageParser(
        prog="ascend-lint server",
        description="Run the language server over stdin/stdout: findings, quick fixes and "
        "rule help in any LSP editor, with the settings of each file's pyproject.toml.",
    )
    p.parse_args(argv)
    from ascend_lint.server import main as serve

    return serve()


def _cache_dir(args, settings) -> Path:
    import os

    from ascend_lint.cache import CACHE_DIR_NAME

    chosen = (
        getattr(args, "cache_dir", None)
        or os.environ.get("ASCEND_LINT_CACHE_DIR")
        or settings.cache_dir
    )
    if chosen:
        return Path(chosen)
    return settings.root / CACHE_DIR_NAME


def _open_cache(args, settings):
    if args.no_cache:
        return None
    from ascend_lint.cache import Cache

    return Cache(_cache_dir(args, settings))


def _clean_command(argv: list[str]) -> int:
    """`ascend-lint clean`: remove the cache folder of the current project."""
    import shutil

    from ascend_lint.settings import ConfigError, load_settings

    p = UsageParser(prog="ascend-lint clean", description="Remove the lint cache.")
    p.add_argument("--cache-dir", help="cache folder to remove")
    args = p.parse_args(argv)
    try:
        settings = load_settings(None, Path.cwd())
    except ConfigError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return EXIT_ERROR
    from ascend_lint.cache import CACHE_TAG, is_cache_folder

    folder = _cache_dir(args, settings)
    if not folder.exists():
        return EXIT_CLEAN
    if folder.is_symlink() or not folder.is_dir() or not is_cache_folder(folder):
        sys.stderr.write(
            f"error: refusing to remove {folder}: it is not an ascend-lint cache "
            f"(no {CACHE_TAG} written by ascend-lint in it); nothing was deleted\n"
        )
        return EXIT_ERROR
    failures: list[str] = []
    shutil.rmtree(folder, onerror=lambda _f, path, exc: failures.append(f"{path}: {exc[1]}"))
    if failures:
        sys.stderr.write(f"error: could not remove all of {folder}: {failures[0]}\n")
        return EXIT_ERROR
    print(f"Removing cache at: {folder}")
    return EXIT_CLEAN
