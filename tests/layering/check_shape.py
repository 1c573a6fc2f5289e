#!/usr/bin/env python3
"""Fails, naming each one, when a source outside tests/ is over 400 lines or holds a function over 60.

Usage: check_shape.py [--root DIR] [--max-file-lines N] [--max-function-lines N].

Sources are the .h, .cpp and .py files under DIR, leaving out tests/, build folders (build*/) and
hidden folders (.venv, .git). A file's length is its number of lines. A function's length is
lizard's: from the line with the function's name to its last line (its closing brace, or the last
line of a Python body), both included; a nested function counts inside its outer one too.
"""
import argparse
import os
import pathlib
import sys

try:
    import lizard
except ImportError:
    sys.exit("check_shape.py needs lizard (pinned in requirements.txt): .venv/bin/pip install -r requirements.txt")

SOURCE_SUFFIXES = (".h", ".cpp", ".py")


def sources(root):
    for folder, subfolders, names in os.walk(root):
        relative_folder = pathlib.Path(folder).relative_to(root)
        if relative_folder == pathlib.Path("."):
            subfolders[:] = [s for s in subfolders if s != "tests" and not s.startswith("build")]
        subfolders[:] = sorted(s for s in subfolders if not s.startswith("."))
        for name in sorted(names):
            if name.endswith(SOURCE_SUFFIXES):
                yield (relative_folder / name).as_posix()


def main():
    here = pathlib.Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=pathlib.Path, default=here.parent.parent)
    parser.add_argument("--max-file-lines", type=int, default=400)
    parser.add_argument("--max-function-lines", type=int, default=60)
    args = parser.parse_args()

    long_files, long_functions, files = [], [], 0
    for rel in sources(args.root):
        files += 1
        text = (args.root / rel).read_text(errors="replace")
        lines = len(text.splitlines())
        if lines > args.max_file_lines:
            long_files.append(f"{rel}: {lines} lines (a file may have {args.max_file_lines})")
        for function in lizard.analyze_file.analyze_source_code(rel, text).function_list:
            if function.length > args.max_function_lines:
                long_functions.append(f"{rel}:{function.start_line}: {function.name} is {function.length} lines "
                                      f"(a function may have {args.max_function_lines})")
    for problem in long_files + long_functions:
        print(problem)
    if files == 0:
        print(f"no sources found under {args.root}")
        return 1
    print(f"shape: {files} files, {len(long_files)} over {args.max_file_lines} lines, "
          f"{len(long_functions)} functions over {args.max_function_lines} lines")
    return 1 if long_files or long_functions else 0


if __name__ == "__main__":
    sys.exit(main())
