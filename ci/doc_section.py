"""The generated tables of the docs: a script writes its table between two marker lines of a
Markdown file, or checks that the file already holds it (ci/footprint.py, ci/firmware_size.py)."""
import sys
from pathlib import Path


def update(doc: Path, begin: str, end: str, table: str, check: bool, name: str, what: str) -> None:
    """Writes `table` (which starts with `begin` and ends with `end`) in place of the marked
    section of `doc`, or with `check` exits non-zero when the section differs (`name`: the
    script's task, `what`: the table, for the messages)."""
    text = doc.read_text()
    if begin not in text or end not in text:
        sys.exit(f"{name}: {doc} has no {begin} ... {end} section")
    updated = text[:text.index(begin)] + table + text[text.index(end) + len(end):]
    if check:
        if updated != text:
            print(table)
            sys.exit(f"{name}: {doc.name}'s {what} is stale: run cargo make {name}")
        print(f"{name}: {doc.name} current")
    else:
        doc.write_text(updated)
        print(f"{name}: wrote the {what} into {doc.name}")
