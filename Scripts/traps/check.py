#!/usr/bin/env python3
"""Lists every trap left in Sources, each with why neither module code nor outside input reaches it; fails on one
that is not listed in Scripts/traps/allowed.txt (or on a listed one that is gone).

A trap: `fatalError`, `precondition`, `preconditionFailure`, `assert`, `assertionFailure`, `try!`, a force unwrap
(`x!`, `as!`) and `unsafelyUnwrapped`. Comments and string literals are not searched. Each line of allowed.txt is
`FILE | CODE | WHY`, where CODE is the trimmed source line; the line number is left out, so that edits elsewhere in
the file do not stale it.

    python3 Scripts/traps/check.py
"""
import os, re, sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
allowed_file = os.path.join(root, "Scripts", "traps", "allowed.txt")
patterns = [
    ("fatalError", re.compile(r"\bfatalError\s*\(")),
    ("precondition", re.compile(r"\bprecondition(Failure)?\s*\(")),
    ("assert", re.compile(r"\bassert(ionFailure)?\s*\(")),
    ("try!", re.compile(r"\btry!")),
    ("as!", re.compile(r"\bas!")),
    ("force unwrap", re.compile(r"[\w\)\]\}]!(?![=])")),
    ("unsafelyUnwrapped", re.compile(r"\bunsafelyUnwrapped\b")),
]


def code_only(line, in_block):
    """`line` without comments and string literals (roughly: enough for these patterns); and whether a block
    comment is still open after it."""
    out, i = [], 0
    while i < len(line):
        if in_block:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_block = end + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_block, i = True, i + 2
        elif line[i] == '"':
            end = i + 1
            while end < len(line) and line[end] != '"':
                end += 2 if line[end] == "\\" else 1
            out.append('""')
            i = end + 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_block


found = []
for directory, _, files in os.walk(os.path.join(root, "Sources")):
    for name in sorted(files):
        if not name.endswith(".swift"):
            continue
        path = os.path.join(directory, name)
        relative = os.path.relpath(path, root)
        in_block, in_multiline = False, False
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            if '"""' in line:
                in_multiline = not in_multiline if line.count('"""') == 1 else in_multiline
                continue
            if in_multiline:
                continue
            code, in_block = code_only(line, in_block)
            for kind, pattern in patterns:
                if pattern.search(code):
                    found.append((relative, number, kind, line.strip()))

allowed = {}
for line in open(allowed_file, encoding="utf-8"):
    if not line.strip() or line.startswith("#"):
        continue
    parts = [part.strip() for part in line.split(" | ", 2)]
    if len(parts) != 3 or not parts[2]:
        sys.exit(f"{allowed_file}: each line is FILE | CODE | WHY: {line.strip()}")
    allowed[(parts[0], parts[1])] = parts[2]

status = 0
seen = set()
print(f"Traps left in Sources ({len(found)}), each with why neither module code nor outside input reaches it:")
for relative, number, kind, code in found:
    why = allowed.get((relative, code))
    seen.add((relative, code))
    if why is None:
        print(f"error: {relative}:{number}: {kind} not in Scripts/traps/allowed.txt: {code}")
        print("  Fail the call or the module instead, or, if no module code or outside input can reach it, add "
              f"'{relative} | {code} | why' to the list.")
        status = 1
    else:
        print(f"- {relative}:{number} ({kind}): {why}")
for (relative, code), why in sorted(allowed.items()):
    if (relative, code) not in seen:
        print(f"error: Scripts/traps/allowed.txt lists a trap no longer in {relative}: {code}; remove the line.")
        status = 1
sys.exit(status)
