#!/usr/bin/env python3
"""tools/test_summary.py: the line tools/aos.sh test ends with, and what it
says on stderr, from bazel's output and the targets' googletest XML."""

import os
import subprocess
import sys
import tempfile
import unittest

RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", ""),
                        os.environ.get("TEST_WORKSPACE", ""))
SCRIPT = os.path.join(RUNFILES, "tools", "test_summary.py")
if not os.path.exists(SCRIPT):
    SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "test_summary.py")


def suite(tests, failures=0, errors=0, skipped=0, disabled=0, cases=""):
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="{tests}" failures="{failures}" disabled="{disabled}" errors="{errors}" name="AllTests">
  <testsuite name="T" tests="{tests}" failures="{failures}" disabled="{disabled}" skipped="{skipped}" errors="{errors}" time="0.1">
{cases}
  </testsuite>
</testsuites>
"""


class TestSummaryTest(unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        self.testlogs = os.path.join(self.dir, "testlogs")

    def write_xml(self, target, text):
        path = os.path.join(self.testlogs,
                            target[2:].replace(":", "/", 1), "test.xml")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as file:
            file.write(text)

    def run_summary(self, bazel_output):
        output = os.path.join(self.dir, "bazel_output")
        with open(output, "w") as file:
            file.write(bazel_output)
        done = subprocess.run(
            [sys.executable, SCRIPT, output, f"--testlogs={self.testlogs}"],
            capture_output=True, text=True, check=False)
        self.assertEqual(done.returncode, 0, done.stderr)
        return done.stdout, done.stderr

    def test_sums_the_cases_of_every_target(self):
        self.write_xml("//aos/util:a_test", suite(3))
        self.write_xml("//aos:b_test", suite(2, failures=1))
        stdout, stderr = self.run_summary(
            "INFO: Build completed\n"
            "//aos/util:a_test                    (cached) PASSED in 0.3s\n"
            "//aos:b_test                                  FAILED in 1.2s\n"
            "  /tmp/x/test.log\n"
            "Executed 1 out of 2 tests: 1 test passes and 1 fails locally.\n")
        self.assertEqual(stdout, "4 passed, 1 failed\n")
        self.assertEqual(stderr, "")

    def test_a_target_without_results_is_one_failure_named(self):
        stdout, stderr = self.run_summary(
            "//aos:broken_test                    FAILED TO BUILD\n"
            "//aos:slow_test                      TIMEOUT in 300.0s\n"
            "//aos:lost_test                      NO STATUS\n"
            "//aos:crashed_test                   FAILED in 0.1s\n")
        self.assertEqual(stdout, "0 passed, 4 failed\n")
        self.assertEqual(
            stderr, "aos: //aos:broken_test: NOT_RUN\n"
            "aos: //aos:slow_test: TIMEOUT\n"
            "aos: //aos:lost_test: NOT_RUN\n"
            "aos: //aos:crashed_test: FAILED\n")

    def test_skipped_and_disabled_cases_are_named_with_their_reason(self):
        cases = (
            '    <testcase name="Runs" status="run" classname="T"/>\n'
            '    <testcase name="NeedsRoot" status="run" result="skipped"'
            ' classname="T">\n'
            '      <skipped message="x.cc:12&#x0A;needs root"/>\n'
            '    </testcase>\n'
            '    <testcase name="DISABLED_Old" status="notrun" classname="T"/>')
        self.write_xml("//aos:c_test",
                       suite(3, skipped=1, disabled=1, cases=cases))
        stdout, stderr = self.run_summary(
            "//aos:c_test                         PASSED in 0.5s\n")
        self.assertEqual(stdout, "1 passed, 0 failed, 2 skipped\n")
        self.assertEqual(
            stderr, "aos: //aos:c_test T.NeedsRoot skipped: needs root\n"
            "aos: //aos:c_test T.DISABLED_Old disabled\n")

    def test_a_file_cut_short_still_counts_what_it_has(self):
        self.write_xml("//aos:d_test", suite(5, failures=2)[:300])
        stdout, _ = self.run_summary(
            "//aos:d_test                         FAILED in 0.5s\n")
        self.assertEqual(stdout, "3 passed, 2 failed\n")

    def test_no_targets(self):
        stdout, stderr = self.run_summary("ERROR: no such package\n")
        self.assertEqual(stdout, "0 passed, 0 failed\n")
        self.assertEqual(stderr, "")

    def test_misuse_is_one_line(self):
        done = subprocess.run([sys.executable, SCRIPT], capture_output=True,
                              text=True, check=False)
        self.assertEqual(done.returncode, 1)
        self.assertEqual(done.stderr,
                         "test_summary.py: give BAZEL_OUTPUT (see --help)\n")


if __name__ == "__main__":
    unittest.main()
