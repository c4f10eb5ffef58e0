"""``python -m kafka_dump`` runs the ``kdump`` command."""

from kafka_dump.cli import main

main()
