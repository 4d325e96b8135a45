"""Search / held-out overlap: one normalisation of a case, exact and near copies.

`normalise` gives the form two cases are compared in (ids and hashes dropped, every text field
as its skeleton, set-like fields sorted); `near_copies` finds pairs whose normalised shingles
have a Jaccard similarity of 0.9 or more (MinHash LSH from `datasketch`, confirmed exactly).
The spec-time check (`autotune.spec.check.default_set_checker`) and the gate
(`autotune.cases.overlap`) both use them, so `search` refuses a set the gate would refuse.
"""
