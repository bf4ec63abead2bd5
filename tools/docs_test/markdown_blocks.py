"""The fenced code blocks of a markdown page: the one parser the docs tests
share (docs_commands_test.py, first_app_page_test.py, extract_block.py).

    for block in fenced_blocks(text):
        block.language  # "sh", from ```sh examples/x.sh
        block.info      # ["sh", "examples/x.sh"]: the info string's words
        block.line      # the page's line number of its first line
        block.text      # its lines, the fence's indentation removed, each
                        # ending in a newline

A block closes at a line of the same fence character, at least as long,
with no info (CommonMark); one still open at the end of the page is left
out.
"""

import re

_FENCE = re.compile(r"^( *)(`{3,}|~{3,})\s*(.*?)\s*$")


class Block:
    def __init__(self, info, line, lines):
        self.info = info
        self.language = info[0] if info else ""
        self.line = line
        self.lines = lines
        self.text = "".join(f"{text}\n" for text in lines)


def fenced_blocks(text):
    blocks = []
    opened = None  # (indentation, fence, info, first line, lines)
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if opened is None:
            if match:
                opened = (match.group(1), match.group(2), match.group(3).split(),
                          number + 1, [])
            continue
        indentation, fence, info, first, lines = opened
        if (match and match.group(2)[0] == fence[0] and len(match.group(2)) >= len(fence)
                and not match.group(3)):
            blocks.append(Block(info, first, lines))
            opened = None
            continue
        lines.append(line[len(indentation):] if line.startswith(indentation)
                     else line.lstrip())
    return blocks
