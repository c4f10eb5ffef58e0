"""The compiled readers and writers (C), each the twin of a pure-Python module."""
