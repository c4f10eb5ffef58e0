"""One module per command, each a ``@click.command`` that ``cli.py`` registers.

A command takes its options from ``options.py``, has ``analysis/`` do the work and ``render/`` build the
output, writes through one ``Output`` and returns its exit code; errors and Ctrl-C propagate to
``cli.py``. A closed stdout is ``Output.closed``: the command stops, or goes on to its verdict.
"""

EXIT_OK = 0  # all good (a zero-filled or partial tail is a fact, not corruption)
EXIT_CORRUPT = 1  # corrupt data was found, reported in place, and reading went on
EXIT_BAD_INPUT = 2  # the input could not be read at all (missing file, not a segment, bad option)
EXIT_INTERRUPTED = 130  # stopped by Ctrl-C (SIGINT), as a shell reports a command killed by it

EXIT_MEANINGS = {
    EXIT_OK: "all good",
    EXIT_CORRUPT: "corrupt data was found",
    EXIT_BAD_INPUT: "the input could not be read",
}
