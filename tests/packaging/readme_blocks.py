#!/usr/bin/env python3
"""The README's fenced code blocks of one kind, each into a file of its own:
the one extraction the README's tests share (find_package.sh takes the first
```cmake block, readme_snippets.sh every ```sh block).

usage: readme_blocks.py README INFO DIR
  writes DIR/1.INFO, DIR/2.INFO, ... (in the README's order) for the blocks
  whose info string is exactly INFO (```sh, not ```shell: the README's rule
  for what CI runs, tests/README.md), and prints one line per block:
  "N LINE" (LINE: the README line of its opening fence).
"""
import os
import re
import sys


def blocks(path, info):
    """(line of the opening fence, text) of each block with this info string."""
    found, current, start = [], None, 0
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fence = re.match(r"^```(\S*)\s*$", line)
            if current is None and fence:
                current, start = ([] if fence.group(1) == info else None), number
                if current is None:
                    current = False  # another kind: skip to its end
            elif current is not None and re.match(r"^```\s*$", line):
                if current is not False:
                    found.append((start, "".join(current)))
                current = None
            elif current not in (None, False):
                current.append(line)
    if current not in (None, False):
        sys.exit("readme_blocks: %s: the block at line %d is not closed" % (path, start))
    return found


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    path, info, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    for n, (line, text) in enumerate(blocks(path, info), 1):
        with open(os.path.join(out, "%d.%s" % (n, info)), "w", encoding="utf-8") as f:
            f.write(text)
        print(n, line)


if __name__ == "__main__":
    main()
