#!/usr/bin/env python3
"""A tiny external harness speaking contextos-lab.harness/1 (JSON in on stdin, JSON lines out).

Stdlib only, so it stands for a program in any language: it never imports contextos_lab.

  harness.py --surfaces        print the tunable surfaces (surfaces.json) as a JSON array
  harness.py < request.json    request = {"protocol", "config", "cases"}; one result line per case

The model: each case offers evidence snippets with a relevance score and the decision each
supports. The harness reads the `top_k` most relevant snippets (each costs its words in tokens),
votes by relevance, and escalates when the winning share is below `min_confidence`.
More evidence finds the decisive snippet more often but costs tokens and lets distractors
dilute the vote; a high threshold escalates (safe, but wrong unless escalation was expected).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROMPT_TOKENS = 40


def decide(case: dict, top_k: int, min_confidence: float) -> dict:
    evidence = sorted(case.get("evidence", []), key=lambda e: (-e["relevance"], e["id"]))
    used = evidence[:top_k]
    votes: dict[str, float] = {}
    for item in used:
        votes[item["supports"]] = votes.get(item["supports"], 0.0) + item["relevance"]
    total = sum(votes.values())
    if total > 0:
        best = min(votes, key=lambda d: (-votes[d], d))
        confidence = votes[best] / total
    else:
        best, confidence = "escalate", 0.0
    decision = best if confidence >= min_confidence else "escalate"
    tokens = PROMPT_TOKENS + len(case["request"].split())
    tokens += sum(len(item["text"].split()) for item in used)
    return {
        "case_id": case["case_id"],
        "decision": decision,
        "output_text": f"{decision} (confidence {confidence:.2f})",
        "evidence_used": [item["id"] for item in used],
        "tokens": tokens,
        "latency_ms": round(5.0 + 0.05 * tokens, 3),
        "trace": [{"step": "vote", "votes": votes, "confidence": round(confidence, 4)}],
    }


def main(argv: list[str]) -> int:
    if "--surfaces" in argv:
        sys.stdout.write((HERE / "surfaces.json").read_text(encoding="utf-8"))
        return 0
    request = json.load(sys.stdin)
    config = request.get("config", {})
    top_k = int(config.get("top_k", 2))
    min_confidence = float(config.get("min_confidence", 0.5))
    for case in request["cases"]:
        sys.stdout.write(json.dumps(decide(case, top_k, min_confidence)) + "\n")
    print(f"answered {len(request['cases'])} cases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
