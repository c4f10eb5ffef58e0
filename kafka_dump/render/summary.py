"""The closing summary a command writes on stderr when a person is watching (stderr is a terminal)."""

from __future__ import annotations

from rich.text import Text

from kafka_dump.render.theme import number, plural


def closing_summary(
    *,
    files: int,
    batches: int,
    records: int,
    corrupt: int,
    tails: int = 0,
    tail_bytes: int = 0,
    exit_code: int = 0,
    meaning: str = "",
    aborted: int = 0,
    unmarked: int = 0,
) -> Text:
    """``3 files · 12 batches · 1,034 records · 1 problem · exit 1: corrupt data was found``;
    ``unmarked``: files with transactional data and no ``.txnindex``, said on a line of its own."""
    text = Text(style="kdump.summary")
    text.append(" · ".join([plural(files, "file"), plural(batches, "batch"), plural(records, "record")]))
    text.append(" · ")
    text.append(plural(corrupt, "problem"), style="kdump.problem" if corrupt else "kdump.ok")
    if aborted:
        text.append(" · ")
        text.append(f"{plural(aborted, 'aborted batch')}", style="kdump.aborted")
    if tails:
        text.append(" · ")
        text.append(f"{plural(tails, 'tail')} ({number(tail_bytes)} bytes)", style="kdump.tail")
    if exit_code:
        text.append(" · ")
        text.append(f"exit {exit_code}" + (f": {meaning}" if meaning else ""), style="kdump.problem")
    if unmarked:
        text.append(
            f"\n{plural(unmarked, 'file')} with transactional data and no .txnindex: "
            "data of aborted transactions is not marked there (none can be told apart)"
        )
    return text
