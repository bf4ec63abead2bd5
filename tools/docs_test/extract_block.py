#!/usr/bin/env python3
"""Prints the Nth fenced block of a language from a markdown page.

  extract_block.py PAGE LANGUAGE N > FILE

N counts from 0 among the page's blocks of that language (```cpp ...).
For tests that compile or run what a page shows (tools/docs_test/BUILD).
"""

import re
import sys


def main(page, language, index):
    fence = re.compile(r"^\s*(```+)\s*(\S*)")
    blocks, lines, opened = [], None, None
    with open(page, encoding="utf-8") as file:
        for line in file.read().splitlines():
            match = fence.match(line)
            if opened is None:
                if match:
                    opened, lines = match, ([] if match.group(2) == language else None)
                continue
            if match and match.group(1) == opened.group(1) and not match.group(2):
                if lines is not None:
                    blocks.append("\n".join(lines) + "\n")
                opened = None
                continue
            if lines is not None:
                lines.append(line)
    if index >= len(blocks):
        sys.exit(f"{page} has {len(blocks)} ```{language} blocks, not {index + 1}")
    sys.stdout.write(f"// The ```{language} block {index} of {page}, as the page shows it.\n")
    sys.stdout.write(blocks[index])


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
