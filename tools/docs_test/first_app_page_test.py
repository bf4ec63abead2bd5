#!/usr/bin/env python3
"""docs/first_app.md shows exactly the files of examples/first_app/, and
they build and run as it says.

- Every file of the example is on the page once, in a fenced block whose
  info string names it (```cpp examples/first_app/talker.cc), and the block
  is the file, byte for byte.
- The listener, the talker and the streamer run on a scratch --shm_base:
  the streamer prints both applications' reports, and the listener, once
  stopped, says it received ticks.
- Under starterd, as the page's starter section says, both run and report.
- The page's lesson holds: with the channel's frequency left at its default,
  the 200 Hz talker stops with the kMessagesSentTooFast line the page quotes.
"""

import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from markdown_blocks import fenced_blocks

PAGE = "docs/first_app.md"
FILES = [
    "examples/first_app/first_app.fbs",
    "examples/first_app/first_app.json",
    "examples/first_app/talker.cc",
    "examples/first_app/listener.cc",
    "examples/first_app/BUILD",
]
failures = []



def _measured(text):
    """`text` with the rate and interval a run measured (CheckOk's line)
    replaced by N: they vary from run to run."""
    return re.sub(r"sent [0-9.]+ a second \([0-9.]+ ms", "sent N a second (N ms",
                  text)

def fail(message):
    print("FAIL: " + message)
    failures.append(message)


def blocks_by_file(text):
    """{path: [block text]} of the fenced blocks whose info names a path."""
    blocks = {}
    for block in fenced_blocks(text):
        if len(block.info) > 1:
            blocks.setdefault(block.info[1], []).append(block.text)
    return blocks


def check_page_shows_the_files(root, page_text):
    blocks = blocks_by_file(page_text)
    for path in FILES:
        shown = blocks.get(path, [])
        if len(shown) != 1:
            fail(f"{PAGE} shows {path} {len(shown)} times; want once, in a block "
                 f"opened with ```<language> {path}")
            continue
        with open(os.path.join(root, path), encoding="utf-8") as file:
            actual = file.read()
        if shown[0] != actual:
            diff = difflib.unified_diff(shown[0].splitlines(), actual.splitlines(),
                                        f"{PAGE} ({path})", path, lineterm="")
            fail(f"{PAGE} does not show {path} as it is:\n" + "\n".join(diff))
    for path in blocks:
        if path not in FILES:
            fail(f"{PAGE} shows {path}, which is not a file of the example "
                 "(FILES in tools/docs_test/first_app_page_test.py)")


def check_they_run(root, base):
    bin_dir = os.path.join(root, "examples/first_app")
    config = os.path.join(bin_dir, "first_app_config.json")
    flags = [f"--shm_base={base}"]
    listener = subprocess.Popen([os.path.join(bin_dir, "listener")] + flags,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    talker = subprocess.Popen([os.path.join(bin_dir, "talker")] + flags,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Three reports of each: a couple of whole windows.
        streamer = subprocess.run(
            [os.path.join(root, "aos/tools/aos_timing_report_streamer"), f"--config={config}",
             "--application=talker,listener", "--count=6"] + flags,
            capture_output=True, text=True, timeout=120)
    finally:
        for process in (talker, listener):
            process.terminate()
    outputs = {}
    for name, process in (("talker", talker), ("listener", listener)):
        stdout, stderr = process.communicate(timeout=60)
        outputs[name] = stdout
        if process.returncode != 0:
            fail(f"{name} exited {process.returncode} on SIGTERM: {stderr}")
    if streamer.returncode != 0:
        fail(f"the streamer exited {streamer.returncode}: {streamer.stderr}")
    for row in (r"^talker\[\d+\]", r"^listener\[\d+\]", r"^  timer tick ",
                r"^  watcher /first_app first_app\.Tick ",
                r"^  sender /first_app first_app\.Tick: \d+ sent",
                r"^Summary: every report of each application added up"):
        if not re.search(row, streamer.stdout, re.M):
            fail(f"the streamer printed no line matching {row!r}:\n{streamer.stdout}")
    received = re.search(r"^listener: received (\d+) ticks", outputs["listener"], re.M)
    if not received or int(received.group(1)) == 0:
        fail(f"the listener received no ticks: {outputs['listener']!r}")
    if not re.search(r"^talker: sent [1-9]\d* ticks", outputs["talker"], re.M):
        fail(f"the talker says it sent none: {outputs['talker']!r}")


def check_the_starter(root, base):
    """The page's starter section: starterd runs both applications from the
    config (with its --shm_base, which they inherit), aos_starter sees them
    running and reporting, and SIGTERM stops them and starterd cleanly."""
    config = os.path.join(root, "examples/first_app/first_app_config.json")
    flags = [f"--config={config}", f"--shm_base={base}/starter"]
    starterd = subprocess.Popen(
        [os.path.join(root, "aos/starter/starterd"), f"--binary_dir={root}"] + flags,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    aos_starter = [os.path.join(root, "aos/starter/aos_starter"), "--timeout_s=60"] + flags
    try:
        for name in ("talker", "listener"):
            started = subprocess.run(aos_starter + ["--until_reporting", "start", name],
                                     capture_output=True, text=True, timeout=120)
            if started.returncode != 0 or not re.match(
                    rf"^{name}: RUNNING, reporting \(pid \d+\)$", started.stdout):
                fail(f"aos_starter start {name} exited {started.returncode}: "
                     f"{started.stdout}{started.stderr}")
        status = subprocess.run(aos_starter + ["status"], capture_output=True, text=True,
                                timeout=120)
        for name in ("talker", "listener"):
            if not re.search(rf"^ *{name} +RUNNING +\d+ +0 .* yes ", status.stdout, re.M):
                fail(f"aos_starter status does not show {name} running and reporting:\n"
                     f"{status.stdout}{status.stderr}")
    finally:
        starterd.terminate()
        _, stderr = starterd.communicate(timeout=60)
    if starterd.returncode != 0:
        fail(f"starterd exited {starterd.returncode} on SIGTERM: {stderr}")


def check_the_lesson(root, base, page_text):
    with open(os.path.join(root, "examples/first_app/first_app_config.json")) as file:
        config = json.load(file)
    channels = [c for c in config["channels"] if c["name"] == "/first_app"]
    if len(channels) != 1 or "frequency" not in channels[0]:
        fail("first_app_config.json has no /first_app channel with a frequency")
        return
    del channels[0]["frequency"]  # the default, 100
    slow = os.path.join(base, "default_frequency_config.json")
    with open(slow, "w") as file:
        json.dump(config, file)
    try:
        talker = subprocess.run(
            [os.path.join(root, "examples/first_app/talker"), f"--config={slow}",
             f"--shm_base={base}/shm"], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        fail("at the default frequency the 200 Hz talker ran a minute without failing")
        return
    line = talker.stderr.strip().splitlines()[0] if talker.stderr.strip() else ""
    if talker.returncode == 0 or "kMessagesSentTooFast" not in line:
        fail(f"at the default frequency the talker exited {talker.returncode} with "
             f"{talker.stderr!r}; want kMessagesSentTooFast")
    elif _measured(line) not in _measured(page_text):
        fail(f"{PAGE} does not quote the talker's line as it is:\n{line}")


def main():
    root = os.path.join(os.environ["TEST_SRCDIR"], os.environ["TEST_WORKSPACE"])
    with open(os.path.join(root, PAGE), encoding="utf-8") as file:
        page_text = file.read()
    check_page_shows_the_files(root, page_text)
    base = tempfile.mkdtemp(prefix="aos_first_app.", dir="/dev/shm")
    try:
        check_they_run(root, base)
        check_the_starter(root, base)
        check_the_lesson(root, base, page_text)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
