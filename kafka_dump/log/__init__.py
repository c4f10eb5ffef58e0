"""The log: segments read and written, their indexes and side files, salvage."""
