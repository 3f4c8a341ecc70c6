#!/usr/bin/env python3
"""Checks every Catch2 TEST_CASE name under a folder for what ctest cannot hold: a ';' (CMake's
list separator) or a square bracket (CMake keeps a '[' ... ']' span as one list element) makes
catch_discover_tests glue that name and every later one of the binary into one ctest test whose
filter matches nothing, and which then passes without running anything. Prints
FILE:LINE: error: ... for each, exits 1 if any.

    check_test_names.py [DIR]   (default: the tests/ folder beside this script's)
"""
import pathlib
import re
import sys

NAME = re.compile(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"')


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent / "tests")
    bad = 0
    for path in sorted(root.rglob("*.cc")):
        text = path.read_text(errors="replace")
        for match in NAME.finditer(text):
            if any(c in match.group(1) for c in ";[]"):
                line = text.count("\n", 0, match.start()) + 1
                print(f"{path}:{line}: error: test name holds ';', '[' or ']' (ctest would run none of the later "
                      f"tests): {match.group(1)}")
                bad += 1
    print(f"check_test_names: {bad} bad name(s) under {root}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
