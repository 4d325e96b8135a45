"""A free-text theme's exemplars are different quotes: notebook 01 showed one correction twice
when copies of it sat closest to the theme's centre."""

from __future__ import annotations

from contextos_lab.insights.text_clusters import cluster_texts


def test_each_theme_quotes_two_different_texts() -> None:
    texts = (
        ["the invoice total was wrong"] * 12
        + ["invoice total wrong again", "wrong total on the invoice"]
        + ["The invoice  total was wrong"]  # the same correction, spaced and cased differently
        + ["the shipping address was missing"] * 12
        + ["address missing on shipping label", "missing the shipping address", "no address"]
    )
    got = cluster_texts(texts, n_null=3)
    assert len(got.clusters)
    for exemplars in got.clusters["exemplars"]:
        normalised = [" ".join(t.split()).casefold() for t in exemplars]
        assert len(exemplars) == 2 and len(set(normalised)) == 2, exemplars
