#!/usr/bin/env python3
"""Sums up a `bazel test --test_summary=short` run, as tools/aos.sh test ends.

    tools/test_summary.py BAZEL_OUTPUT [--testlogs=DIR]

BAZEL_OUTPUT is what bazel printed; DIR (default: bazel-testlogs) holds each
target's googletest XML, TARGET/test.xml. Prints on stdout one line,
"N passed, N failed" (", N skipped" when some were): the test cases of every
target that ran, from its XML. A target that failed without usable results
(it did not build, crashed before writing its XML, timed out) counts as one
failure and is named on stderr ("aos: //pkg:test: TIMEOUT"); so is each
skipped or disabled test case, with the reason it printed
(GTEST_SKIP() << "why"). Exit status 0 even when tests failed: the caller
judges the line.
"""

import re
import sys
import xml.etree.ElementTree as tree

# A target's line in bazel's short summary, e.g.
# "//aos/util:str_cat_test   (cached) PASSED in 0.3s".
SUMMARY_LINE = re.compile(
    r"^(//[^ ]+)\s+(?:\(cached\) )?"
    r"(PASSED|FAILED TO BUILD|FAILED|NO STATUS|TIMEOUT|FLAKY|INCOMPLETE|SKIPPED)"
    r"(?: .*)?$")
# Statuses of a target that never ran.
NOT_RUN = {"FAILED TO BUILD", "NO STATUS"}
# What a number in an XML attribute starts with.
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
TESTSUITE = re.compile(r"<testsuite[ >]")


def say(text):
    print(f"aos: {text}", file=sys.stderr)


def number(text):
    """The number `text` starts with, or 0 (as awk reads "12abc")."""
    match = NUMBER.match(text)
    return float(match.group(0)) if match else 0.0


def count_cases(xml_text):
    """(passed, failed, skipped) test cases of a googletest XML file.

    Read line by line from the <testsuite> elements' attributes, so that a
    file a crash cut short still counts what it has.
    """
    tests = fails = skips = 0.0
    for line in xml_text.splitlines():
        if not TESTSUITE.search(line):
            continue
        value = {}
        for part in line.split(" "):
            pieces = part.split("=")
            if len(pieces) == 2:
                value[pieces[0]] = number(re.sub(r'[">/]', "", pieces[1]))
        tests += value.get("tests", 0)
        fails += value.get("failures", 0) + value.get("errors", 0)
        skips += value.get("skipped", 0) + value.get("disabled", 0)
    return int(tests - fails - skips), int(fails), int(skips)


def say_skip_reasons(target, path):
    """Names each skipped or disabled test case of `path` on stderr."""
    try:
        cases = list(tree.parse(path).iter("testcase"))
    except (OSError, tree.ParseError) as error:
        say(f"{target}: skipped tests, but {path} does not parse: {error}")
        return
    for case in cases:
        name = f"{target} {case.get('classname')}.{case.get('name')}"
        skipped = case.find("skipped")
        if skipped is not None:
            lines = (skipped.get("message") or "").strip().splitlines()
            if len(lines) > 1:
                reason = lines[-1]
            else:
                reason = "no reason given" + (f" ({lines[0]})" if lines else "")
            say(f"{name} skipped: {reason}")
        elif case.get("status") == "notrun":
            say(f"{name} disabled")


def summarize(bazel_output, testlogs):
    """The summary line of `bazel_output` (bazel's text); says the rest."""
    passed = failed = skipped = 0
    for line in bazel_output.splitlines():
        match = SUMMARY_LINE.match(line)
        if not match:
            continue
        target, status = match.group(1), match.group(2)
        if status in NOT_RUN:
            status = "NOT_RUN"
        xml = f"{testlogs}/{target[2:].replace(':', '/', 1)}/test.xml"
        p = f = s = 0
        if status in ("PASSED", "FAILED"):
            try:
                with open(xml, encoding="utf-8", errors="replace") as file:
                    p, f, s = count_cases(file.read())
            except OSError:
                pass
        if status != "PASSED" and f == 0:
            say(f"{target}: {status}")
            f = 1
        passed += p
        failed += f
        skipped += s
        if s > 0:
            say_skip_reasons(target, xml)
    line = f"{passed} passed, {failed} failed"
    return f"{line}, {skipped} skipped" if skipped > 0 else line


def main(argv):
    testlogs = "bazel-testlogs"
    paths = []
    for arg in argv[1:]:
        if arg.startswith("--testlogs="):
            testlogs = arg[len("--testlogs="):]
        elif arg in ("-h", "--help"):
            print(__doc__.strip())
            return 0
        else:
            paths.append(arg)
    if len(paths) != 1:
        print("test_summary.py: give BAZEL_OUTPUT (see --help)", file=sys.stderr)
        return 1
    try:
        with open(paths[0], encoding="utf-8", errors="replace") as file:
            output = file.read()
    except OSError as error:
        print(f"test_summary.py: {paths[0]}: {error.strerror}", file=sys.stderr)
        return 1
    print(summarize(output, testlogs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
