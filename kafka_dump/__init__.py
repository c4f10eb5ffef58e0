"""kdump: inspect, verify and convert Apache Kafka log segments."""

__version__ = "0.1.0"
