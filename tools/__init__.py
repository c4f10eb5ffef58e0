"""Generators of committed source (the C layout header, Kafka's schema table)."""
