"""Which CNN/DailyMail layout DATA_DIR holds, for ``recipe.sh prepare``.

    python layout.py DATA_DIR

fairseq's BART layout (``train.source``/``.target``, ``val``, ``test``: LAYOUT=source_target) or
PreSumm's shards (``NAME.{train,valid,test}.N.json`` of one corpus NAME: LAYOUT=presumm), found
from the files; the environment's LAYOUT chooses when both are there. Prints the shell
assignments LAYOUT and FILES (the splits' file prefixes in DATA_DIR) and, on stderr, the line
saying what was chosen; anything else is one line ``recipe.sh: ...`` and exit status 1 (2 for a
bad LAYOUT).
"""

import os
import re
import shlex
import sys

SHARD = re.compile(r"(.*?)\.train\.[0-9].*\.json")


def fail(message: str, status: int = 1):
    print(f"recipe.sh: {message}", file=sys.stderr)
    sys.exit(status)


def main(folder: str, layout: str) -> None:
    files = os.listdir(folder) if os.path.isdir(folder) else []
    names = sorted({m.group(1) for m in map(SHARD.fullmatch, files) if m})
    fairseq = os.path.isfile(os.path.join(folder, "train.source"))
    if layout:
        pass
    elif names and fairseq:
        fail(f"{folder} holds both train.source (fairseq's layout) and PreSumm shards "
             f"({' '.join(names)}.train.N.json): set LAYOUT=source_target or LAYOUT=presumm")
    elif names:
        layout = "presumm"
    elif fairseq:
        layout = "source_target"
    else:
        fail(f"{folder} holds neither train.source/.target (fairseq's BART layout) nor "
             f"NAME.train.N.json shards (PreSumm's)")
    if layout == "source_target":
        prefixes = ["train", "val", "test"]
    elif layout == "presumm":
        if len(names) != 1:
            fail(f"LAYOUT=presumm needs the shards of one corpus in {folder} (NAME.train.N.json); "
                 f"found: {' '.join(names) or 'none'}")
        prefixes = [f"{names[0]}.{split}" for split in ("train", "valid", "test")]
    else:
        fail(f"LAYOUT={layout} (expected source_target or presumm)", 2)
    print(f"recipe.sh: {folder} read as LAYOUT={layout}: "
          + " ".join(f"{folder}/{p}" for p in prefixes), file=sys.stderr)
    print(f"LAYOUT={layout}\nFILES={shlex.quote(' '.join(prefixes))}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: layout.py DATA_DIR", 2)
    main(sys.argv[1], os.environ.get("LAYOUT", ""))
