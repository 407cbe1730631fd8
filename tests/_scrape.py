"""A Prometheus scrape as a test reads it: every sample by name and labels, parsed with prometheus-client's parser."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Samples", "samples", "value"]

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    """Every sample of a scrape, by name and labels."""
    found: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(scrape: Samples, name: str, **labels: str) -> float:
    """One sample's value (0 when the scrape has no such series)."""
    return scrape.get((name, frozenset(labels.items())), 0.0)
