"""One module per command (``dump.py``, ...), each a ``@click.command`` that ``cli.py`` registers.

How a command is written (see ``dump.py``):

* options from ``options.py`` (input paths, range filters, ``--format``, ``--color``,
  ``--traceback``...), so every command spells and documents them alike;
* the library does the work (``analysis/``), a renderer builds the output (``render/``), and
  everything is written through one ``render.output.Output`` (width, colour, bytes or text, stderr);
* the command returns its exit code (``EXIT_OK`` or ``EXIT_CORRUPT``). It lets ``KafkaDumpError``
  and ``BrokenPipeError`` propagate: ``cli.py``'s group turns the first into one line and exit 2
  (with the trace under ``--traceback``) and ends the second quietly.
"""

EXIT_OK = 0  # all good (a zero-filled or partial tail is a fact, not corruption)
EXIT_CORRUPT = 1  # corrupt data was found, reported in place, and reading went on
EXIT_BAD_INPUT = 2  # the input could not be read at all (missing file, not a segment, bad option)

EXIT_MEANINGS = {
    EXIT_OK: "all good",
    EXIT_CORRUPT: "corrupt data was found",
    EXIT_BAD_INPUT: "the input could not be read",
}
