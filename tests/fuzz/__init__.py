"""A fuzzing harness that stays in the project (issue 11): mutated fixtures through every command.

``tests/fuzz/test_fuzz.py`` runs a small budget with the test suite; ``python -m tests.fuzz`` runs a
fixed budget (CI) or a longer search (``--minutes N``), on every core.
"""
