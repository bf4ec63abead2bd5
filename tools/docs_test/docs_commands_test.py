#!/usr/bin/env python3
"""Runs the shell commands of README.md and docs/*.md as written.

docs/building.md ("The docs test") says what a reader can rely on. In short:
every command of every ```sh block runs, in order, in the page's own fresh
checkout (the workspace's sources, nothing built, its bazel-bin made only by
the page's own build commands), in a private mount and pid namespace with a
tmpfs of its own on /dev/shm (so every --shm_base, the default
/dev/shm/aos too, is a scratch one) and on /tmp. A command fails the test
when it exits non-zero or runs a program that is not there. Bazel cannot
run inside a Bazel test, so `bazel build` and `bazel run` are answered from
this test's own runfiles (fake_bazel.py): a program the page never builds
is missing, as it would be for a reader.

A command the test must not run says why in the doc, in a trailing comment
`# not run by the docs test: <why>`; one whose comment says "until
Ctrl-C" gets Ctrl-C (SIGINT to its process group) after INTERRUPT_AFTER_S
seconds and must then exit 0. Pages this branch does not
own are annotated here instead, in OVERRIDES, until their owners move the
annotations into the docs. Each skip is printed with its reason, and each
command is one test case of the XML report that `./tools/aos.sh test` sums
up (a skip with its reason).

  docs_commands_test.py [--page=docs/x.md]... [--jobs=N] [--verbose]
"""

import argparse
import concurrent.futures
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import escape, quoteattr

from markdown_blocks import fenced_blocks

INTERRUPT_AFTER_S = 3
# A command that runs longer (and is not marked as running until Ctrl-C)
# fails the test; so does a page whose commands take longer in all.
COMMAND_LIMIT_S = 60
PAGE_LIMIT_S = 100

SKIP, CTRL_C, BROKEN = "skip", "ctrl-c", "broken"

# Commands of pages owned elsewhere that cannot run as they are, keyed by
# (page, the command without comments, whitespace collapsed). Each entry
# must match exactly one command, a BROKEN one must still fail: a stale
# entry fails the test, so this list only shrinks as the pages gain
# annotations (`# not run by the docs test: <why>`, `# until Ctrl-C`) and
# fixes.
BENCHMARK = ("a benchmark: it measures for seconds to minutes, and benchmarks "
             "are never tests (docs/benchmarks.md)")
OVERRIDES = {
    ("README.md", "./tools/aos.sh test"):
        (SKIP, "runs every test, this one among them"),
    ("docs/pingpong.md", "./tools/aos.sh run --duration=60"):
        (CTRL_C, "60 s; `run` streams for --duration or until Ctrl-C (README.md)"),
    ("docs/streamer.md",
     "bazel-bin/aos/tools/aos_timing_report_streamer --application=ping "
     "--config=bazel-bin/examples/pingpong_config.json"):
        (CTRL_C, "the streamer streams until Ctrl-C, --duration or --count"),
    ("docs/streamer.md",
     "aos_timing_report_streamer --metrics_port=9971 --metrics_address=0.0.0.0"):
        (SKIP, "a fragment: flags to add to a streamer command"),
    ("docs/streamer.md",
     "aos_timing_report_streamer --metrics_port=9971 --metrics_address=10.9.71.2"):
        (SKIP, "a fragment: flags to add to a streamer command"),
    ("docs/network.md", "./tools/aos.sh run --multinode"):
        (SKIP, "as root it makes network namespaces and a veth pair, the machine's "
         "network; //examples:multinode_pingpong_e2e_test runs the same on loopback"),
    ("docs/network.md", "tools/dds_security/make_test_ca.sh /etc/aos/dds pi1 pi2"):
        (SKIP, "writes /etc/aos/dds, the machine's configuration"),
    ("docs/network.md", "message_bridge --node=pi1 --dds_security=/etc/aos/dds ..."):
        (SKIP, "a fragment: '...' stands for the rest of the command"),
    ("docs/benchmarks.md", "tools/bench/latency.sh"): (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "tools/bench/latency.sh --long"): (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "tools/bench/latency.sh --main_job_only"): (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "tools/bench/latency.sh --json=run.json --plot=run.png"):
        (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "tools/bench/latency.sh --priority=90 --interval_us=500"):
        (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "./tools/aos.sh bazel run //tools/bench:timing_benchmark"):
        (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "./tools/aos.sh bazel run //tools/bench:timing_report_benchmark"):
        (SKIP, BENCHMARK),
    ("docs/benchmarks.md",
     "./tools/aos.sh bazel run -c opt //tools/bench:timer_wakeup_benchmark -- --priority=80"):
        (SKIP, BENCHMARK),
    ("docs/benchmarks.md",
     "valgrind --tool=callgrind --callgrind-out-file=ping.cg bazel-bin/examples/ping "
     "--config=bazel-bin/examples/pingpong_config.json --shm_base=/dev/shm/cg "
     "--priority=0 --sleep_us=1000"):
        (SKIP, "valgrind is not among the packages tools/aos.sh installs; " + BENCHMARK),
    ("docs/benchmarks.md",
     "callgrind_annotate --inclusive=yes ping.cg | grep -E 'EPoll::Run|Main\\(\\)::\\{lambda'"):
        (SKIP, "reads ping.cg, which the valgrind command above writes"),
    ("docs/benchmarks.md",
     "./tools/aos.sh bazel run -c opt //tools/bench:shm_throughput_benchmark"):
        (SKIP, BENCHMARK),
    ("docs/benchmarks.md",
     "./tools/aos.sh bazel run -c opt //tools/bench:shm_wakeup_benchmark -- --priority=80"):
        (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "tools/bench/bridge.sh"): (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "tools/bench/bridge.sh --link=lo"): (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "tools/bench/bridge.sh --seconds=10 --json=bridge.json"):
        (SKIP, BENCHMARK),
    ("docs/benchmarks.md", "tools/bench/bridge.sh --latency_rounds=5"):
        (SKIP, BENCHMARK),
    ("docs/fuzzing.md", "tools/fuzz/fuzz.sh --target=json"):
        (SKIP, "10 CPU-minutes, with clang-14 installed and a build of its own"),
    ("docs/fuzzing.md", "tools/fuzz/fuzz.sh --target=config --cpu_minutes=60 --jobs=2 --merge"):
        (SKIP, "60 CPU-minutes, with clang-14 installed and a build of its own"),
}

_SKIP_NOTE = re.compile(r"not run by the docs test: *(.*)")
_CTRL_C_NOTE = re.compile(r"\buntil Ctrl-C\b")


class Command:
    def __init__(self, page, line, text, comments):
        self.page = page
        self.line = line
        self.text = text  # as written, comments and line breaks included
        self.comments = comments
        self.action = "run"
        self.why = ""
        self.status = None  # "passed", "failed", "skipped", "not reached"
        self.message = ""
        self.seconds = 0.0

    def key(self):
        code = scan(self.text)[2].replace("\\\n", " ")
        return " ".join(code.split())

    def name(self):
        first = self.text.splitlines()[0].strip()
        return f"{self.page}:{self.line}: {first[:100]}"

    def case_name(self):
        """Its name in the XML report, after the page's: the line and the
        command, without comments."""
        return f"line {self.line}: {self.key()[:100]}"


def scan(text):
    """(complete, comments, code) of shell `text`: whether its quotes are
    closed and it does not end in a backslash; the text of each unquoted
    # comment; the text without them."""
    comments, code = [], []
    quote = None
    word_start = True
    i = 0
    while i < len(text):
        char = text[i]
        if quote == "'":
            if char == "'":
                quote = None
        elif char == "\\":
            if i + 1 == len(text):
                return False, comments, "".join(code)
            code.append(text[i:i + 2])
            i += 2
            word_start = False
            continue
        elif quote == '"':
            if char == '"':
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and word_start:
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            comments.append(text[i + 1:end].strip())
            i = end
            continue
        code.append(char)
        word_start = quote is None and char in " \t\n;&|()"
        i += 1
    return quote is None, comments, "".join(code)


def parse_page(page, path):
    """The commands of the page's ```sh blocks."""
    commands = []
    with open(path, encoding="utf-8") as file:
        blocks = [block for block in fenced_blocks(file.read()) if block.language == "sh"]
    for block in blocks:
        pending, start = [], 0
        for number, line in enumerate(block.lines, block.line):
            if not pending:
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                start = number
            pending.append(line)
            text = "\n".join(pending)
            complete, comments, _ = scan(text)
            if complete:
                commands.append(Command(page, start, text, comments))
                pending = []
        if pending:
            raise SystemExit(f"{page}:{start}: a command is not finished when its "
                             "block ends")
    return commands


def classify(commands, errors):
    """Sets each command's action from its comments and OVERRIDES; with
    `errors`, adds one for each OVERRIDES entry that matches no command."""
    used = set()
    for command in commands:
        note = " ".join(command.comments)
        override = OVERRIDES.get((command.page, command.key()))
        if override:
            used.add((command.page, command.key()))
            command.action, command.why = override
        elif (skip := _SKIP_NOTE.search(note)):
            command.action, command.why = SKIP, skip.group(1)
        elif _CTRL_C_NOTE.search(note):
            command.action, command.why = CTRL_C, "the page: it runs until Ctrl-C"
    if errors is None:
        return
    for page, key in OVERRIDES:
        if (page, key) not in used:
            errors.append(f"OVERRIDES has an entry that no command of {page} matches "
                          f"any more; remove it: {key}")


def namespace_prefix():
    """The unshare command that gives a page private /dev/shm, /tmp and
    pids, or None with the reason none works here."""
    base = ["unshare", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc"]
    probe = "mount -t tmpfs docs_test /dev/shm"
    reasons = []
    for prefix in (base, base[:1] + ["--user", "--map-root-user"] + base[1:]):
        try:
            result = subprocess.run(prefix + ["sh", "-c", probe], capture_output=True,
                                    text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as error:
            reasons.append(str(error))
            continue
        if result.returncode == 0:
            return prefix, ""
        reasons.append(result.stderr.strip() or f"exit {result.returncode}")
    return None, "; ".join(reasons)


def make_checkout(directory, runfiles, sources, fake_bazel):
    """A fresh checkout: the sources, nothing built, installed packages."""
    for source in sources:
        target = os.path.join(directory, source)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.symlink(os.path.join(runfiles, source), target)
    open(os.path.join(directory, "WORKSPACE"), "w").close()
    # tools/aos.sh installs the npm packages only when this stamp differs
    # from the lock file: the checkout counts as installed.
    npm = os.path.join(directory, "aos/events/logging/mcap_check")
    os.makedirs(os.path.join(npm, "node_modules"), exist_ok=True)
    for name in ("package-lock.json", "node_modules/.aos-installed-lock"):
        with open(os.path.join(npm, name), "w") as file:
            file.write("the docs test's checkout counts as installed\n")
    fake_bin = os.path.join(directory, ".docs_test/bin")
    os.makedirs(fake_bin)
    scripts = {
        "bazel": f'exec python3 {shlex.quote(fake_bazel)} '
                 f'{shlex.quote(os.path.join(runfiles, "tools/docs_test/docs_targets.manifest"))} '
                 f'{shlex.quote(runfiles)} "$@"',
    }
    for tool in ("apt-get", "sudo", "npm"):
        scripts[tool] = (f'echo "docs test: the command ran {tool} $*: a package is '
                         'missing on this machine (./tools/aos.sh install), and a test '
                         'installs nothing" >&2; exit 1')
    for name, body in scripts.items():
        path = os.path.join(fake_bin, name)
        with open(path, "w") as file:
            file.write("#!/bin/sh\n" + body + "\n")
        os.chmod(path, 0o755)
    return fake_bin


def page_script(commands, directory):
    """The bash script that runs the page's commands in one shell."""
    work = os.path.join(directory, ".docs_test")
    lines = ["exec 3>>" + shlex.quote(os.path.join(work, "status")),
             "cd " + shlex.quote(directory)]
    for index, command in enumerate(commands):
        if command.action == SKIP:
            continue
        out = shlex.quote(os.path.join(work, f"{index}.out"))
        lines.append(f"echo start {index} >&3")
        if command.action == CTRL_C:
            script = os.path.join(work, f"{index}.sh")
            with open(script, "w") as file:
                file.write(command.text + "\n")
            lines.append(
                f"timeout --preserve-status -s INT -k 10 {INTERRUPT_AFTER_S} "
                f"bash -c 'cd \"$1\" && source \"$2\"' _ \"$PWD\" {shlex.quote(script)} "
                f">{out} 2>&1 </dev/null")
        else:
            lines.append("{\n" + command.text + "\n} >" + out + " 2>&1 </dev/null")
        lines.append(f"status=$?; echo end {index} $status >&3")
        if command.action != BROKEN:
            lines.append('[ "$status" = 0 ] || exit 0')
    return "\n".join(lines) + "\n"


def run_page(page, commands, runfiles, sources, fake_bazel, scratch, prefix, outputs_dir):
    directory = tempfile.mkdtemp(prefix=page.replace("/", "_") + ".", dir=scratch)
    fake_bin = make_checkout(directory, runfiles, sources, fake_bazel)
    work = os.path.join(directory, ".docs_test")
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    script = os.path.join(work, "page.sh")
    with open(script, "w") as file:
        file.write(page_script(commands, directory))
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("TEST_", "RUNFILES", "XML_OUTPUT", "JAVA_RUNFILES",
                                   "PYTHON_RUNFILES", "BUILD_"))}
    env["PATH"] = fake_bin + ":" + os.environ.get("PATH", "/usr/bin:/bin")
    env["TMPDIR"] = tmp
    # A private /tmp too, unless this test's own files live there.
    mine = (runfiles, scratch, fake_bazel)
    private_tmp = not any(os.path.realpath(path).startswith("/tmp/") for path in mine)
    setup = ("mount -t tmpfs -o mode=1777 docs_test_shm /dev/shm && "
             + ("mount -t tmpfs -o mode=1777 docs_test_tmp /tmp && " if private_tmp else "")
             + 'exec bash "$1"')
    started = {}
    ended = {}
    status_path = os.path.join(work, "status")
    open(status_path, "w").close()
    shell_output = open(os.path.join(work, "shell.out"), "w+")
    process = subprocess.Popen(prefix + ["bash", "-c", setup, "_", script], env=env,
                               stdout=shell_output, stderr=subprocess.STDOUT,
                               start_new_session=True)
    page_start = time.monotonic()
    overrun = None
    while process.poll() is None:
        time.sleep(0.1)
        read_status(status_path, started, ended)
        now = time.monotonic()
        running = [index for index in started if index not in ended]
        for index in running:
            if (commands[index].action != CTRL_C and
                    now - started[index] > COMMAND_LIMIT_S):
                overrun = (index, f"still running after {COMMAND_LIMIT_S} s: if it runs "
                           "until Ctrl-C, say so in a trailing '# until Ctrl-C'")
        if now - page_start > PAGE_LIMIT_S:
            overrun = (running[0] if running else None,
                       f"the page's commands took over {PAGE_LIMIT_S} s")
        if overrun:
            os.killpg(process.pid, 9)
            process.wait()
            break
    shell_output.seek(0)
    setup_output = shell_output.read()
    shell_output.close()
    read_status(status_path, started, ended)
    for index, command in enumerate(commands):
        if command.action == SKIP:
            command.status = "skipped"
            continue
        output = ""
        out_path = os.path.join(work, f"{index}.out")
        if os.path.exists(out_path):
            with open(out_path, errors="replace") as file:
                output = file.read()
            if outputs_dir:
                name = f"{page.replace('/', '_')}_{command.line}.out"
                shutil.copy(out_path, os.path.join(outputs_dir, name))
        command.output = output
        if index not in started:
            command.status = "not reached"
            if overrun is None and not any(c.status == "failed" for c in commands):
                command.status = "failed"
                command.message = ("the page's shell ended before it: "
                                   + setup_output.strip()[-2000:])
            continue
        command.seconds = ended.get(index, (time.monotonic(),))[0] - started[index]
        if index not in ended:
            command.status = "failed"
            command.message = overrun[1] if overrun else "the page's shell died"
            continue
        code = ended[index][1]
        if command.action == BROKEN:
            command.status = "skipped"
            if code == 0:
                command.status = "failed"
                command.message = ("now passes: remove its BROKEN entry from OVERRIDES "
                                   "in tools/docs_test/docs_commands_test.py")
            continue
        if code == 0:
            command.status = "passed"
            continue
        command.status = "failed"
        command.message = f"exit status {code}"
        missing = re.search(r"line \d+: (\S+): (?:No such file or directory|"
                            r"command not found)", output)
        if code in (126, 127) or missing:
            command.message += (f": a program is missing ({missing.group(1)}): no command "
                                "before it on the page builds or installs it"
                                if missing else ": a program is missing")


def read_status(path, started, ended):
    with open(path) as file:
        for line in file:
            fields = line.split()
            if len(fields) >= 2 and fields[0] == "start":
                started.setdefault(int(fields[1]), time.monotonic())
            elif len(fields) == 3 and fields[0] == "end":
                ended.setdefault(int(fields[1]), (time.monotonic(), int(fields[2])))


def write_xml(path, commands, total_seconds):
    failures = sum(command.status == "failed" for command in commands)
    skipped = sum(command.status in ("skipped", "not reached") for command in commands)
    cases = []
    for command in commands:
        head = (f'<testcase name={quoteattr(command.case_name())} '
                f'classname={quoteattr(command.page)} time="{command.seconds:.2f}"')
        if command.status == "failed":
            cases.append(f"{head}><failure message={quoteattr(command.message)}>"
                         f"{escape(getattr(command, 'output', '')[-4000:])}</failure></testcase>")
        elif command.status in ("skipped", "not reached"):
            reason = (command.why if command.status == "skipped"
                      else "not reached: a command before it failed")
            if command.action == BROKEN:
                reason = "known broken, to be fixed in the page: " + command.why
            # Two lines, as googletest writes them: where, then why.
            cases.append(f"{head}><skipped message={quoteattr(command.name() + chr(10) + reason)}"
                         "/></testcase>")
        else:
            cases.append(f"{head}/>")
    with open(path, "w", encoding="utf-8") as file:
        file.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n')
        file.write(f'<testsuite name="docs_commands" tests="{len(commands)}" '
                   f'failures="{failures}" errors="0" skipped="{skipped}" '
                   f'time="{total_seconds:.2f}">\n')
        file.write("\n".join(cases) + "\n</testsuite>\n</testsuites>\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--page", action="append", default=[],
                        help="only this page (README.md, docs/x.md); repeatable")
    parser.add_argument("--jobs", type=int, default=3, help="pages run at once")
    parser.add_argument("--verbose", action="store_true",
                        help="print every command's output")
    args = parser.parse_args()
    runfiles = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    manifest = os.path.join(runfiles, "tools/docs_test/docs_targets.manifest")
    with open(manifest, encoding="utf-8") as file:
        sources = [line.split("\t")[1].strip() for line in file if line.startswith("src\t")]
    pages = [source for source in sources
             if source == "README.md" or re.fullmatch(r"docs/[^/]+\.md", source)]
    if args.page:
        pages = [page for page in pages if page in args.page]
    started = time.monotonic()
    commands_by_page = {page: parse_page(page, os.path.join(runfiles, page)) for page in pages}
    errors = []
    all_commands = [command for page in pages for command in commands_by_page[page]]
    # With --page, other pages' entries are not stale.
    classify(all_commands, None if args.page else errors)
    prefix, why_not = namespace_prefix()
    if prefix is None:
        for command in all_commands:
            command.status, command.action = "skipped", SKIP
            command.why = ("no private mount namespace here (unshare: " + why_not +
                           "): the docs' commands would share this machine's /dev/shm")
    else:
        scratch = tempfile.mkdtemp(prefix="docs_", dir=os.environ.get("TEST_TMPDIR"))
        fake_bazel = os.path.join(runfiles, "tools/docs_test/fake_bazel.py")
        outputs_dir = os.environ.get("TEST_UNDECLARED_OUTPUTS_DIR")
        runnable = [page for page in pages
                    if any(c.action != SKIP for c in commands_by_page[page])]
        for page in pages:
            if page not in runnable:
                for command in commands_by_page[page]:
                    command.status = "skipped"
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = [pool.submit(run_page, page, commands_by_page[page], runfiles, sources,
                                   fake_bazel, scratch, prefix, outputs_dir)
                       for page in runnable]
            for future in futures:
                future.result()
    total = time.monotonic() - started
    failed = 0
    for command in all_commands:
        if command.status == "failed":
            failed += 1
            print(f"FAIL {command.name()}: {command.message}")
            output = getattr(command, "output", "").rstrip()
            if output:
                print("  its output, last lines:")
                for line in output.splitlines()[-25:]:
                    print("    " + line)
        elif command.status == "skipped":
            what = ("known broken (" + command.why + ")" if command.action == BROKEN
                    else command.why)
            print(f"skipped {command.name()}: {what}")
        elif command.status == "not reached":
            print(f"not reached {command.name()}")
        else:
            note = " (Ctrl-C after {} s)".format(INTERRUPT_AFTER_S) \
                if command.action == CTRL_C else ""
            print(f"ran {command.name()}: exit 0 in {command.seconds:.1f} s{note}")
            if args.verbose:
                lines = getattr(command, "output", "").rstrip().splitlines()
                if len(lines) > 40:
                    print(f"    ... {len(lines) - 40} lines, then:")
                for line in lines[-40:]:
                    print("    " + line)
    for error in errors:
        print("FAIL " + error)
    counts = {status: sum(c.status == status for c in all_commands)
              for status in ("passed", "failed", "skipped", "not reached")}
    print(f"docs test: {len(all_commands)} commands on {len(pages)} pages: "
          f"{counts['passed']} ran, {counts['failed']} failed, {counts['skipped']} skipped, "
          f"{counts['not reached']} not reached, in {total:.0f} s")
    if "XML_OUTPUT_FILE" in os.environ:
        write_xml(os.environ["XML_OUTPUT_FILE"], all_commands, total)
    return 1 if failed or errors or counts["not reached"] else 0


if __name__ == "__main__":
    sys.exit(main())
