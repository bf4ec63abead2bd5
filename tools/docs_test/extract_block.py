#!/usr/bin/env python3
"""Prints the Nth fenced block of a language from a markdown page.

  extract_block.py PAGE LANGUAGE N > FILE

N counts from 0 among the page's blocks of that language (```cpp ...).
For tests that compile or run what a page shows (tools/docs_test/BUILD).
"""

import sys

from markdown_blocks import fenced_blocks


def main(page, language, index):
    with open(page, encoding="utf-8") as file:
        blocks = [block for block in fenced_blocks(file.read())
                  if block.language == language]
    if index >= len(blocks):
        sys.exit(f"{page} has {len(blocks)} ```{language} blocks, not {index + 1}")
    sys.stdout.write(f"// The ```{language} block {index} of {page}, as the page shows it.\n")
    sys.stdout.write(blocks[index].text)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
