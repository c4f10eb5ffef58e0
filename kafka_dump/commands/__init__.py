"""One module per command (a ``@click.command``), each registered in ``cli.py`` with one line."""
