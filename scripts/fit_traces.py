"""Fit the engine's layer-backward constant to the fake-tensor traces (evals/traces), and show every term's fit.

The per-layer terms in service/sizing/activations.py are the bytes of the tensors the traced code keeps, read off
the traces (no free constant). One constant is not a tensor the forward keeps: what one eager attention layer's
backward allocates beyond it (the scores' gradients), which sets the step's peak where the loss does not (small
vocabularies, long sequences). It is fitted here by least squares through the origin, on the traces where the
layers set the peak, against heads x s^2 x b per layer:

    transient peak - what the layers keep (and, checkpointed, the recomputed layer) = c x heads x s^2 x b

Usage: python scripts/fit_traces.py     (prints the fitted value beside EAGER_BACKWARD_SCORE_BYTES)
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from service.evals.traces import comparisons, excluded, load, model_spec, summary, train_setup  # noqa: E402
from service.sizing.activations import (  # noqa: E402
    EAGER_BACKWARD_SCORE_BYTES,
    EAGER_SCORE_BYTES,
    _eager_score_bytes,
    decoder_layer_act_bytes,
    logits_bytes,
    residual_bytes,
)


def main() -> int:
    xs, ys = [], []
    for meta, traces in load():
        for t in traces:
            if excluded(meta, t) or t["attention"] != "eager" or t["method"] in ("full-fp32", "qlora-kbit"):
                continue  # fp32 weights and heads add autocast casts the fit is not about
            m = model_spec({**meta["spec"], **({"vocab_size": t["vocab"]} if t.get("vocab") else {})}, t["layers"])
            s = train_setup(t)
            tokens = s.seq_len * s.micro_batch
            per = decoder_layer_act_bytes(m, s)
            kept = t["layers"] * residual_bytes(s) * tokens * (m.hidden_size or 0)
            y = t["transient_peak"] - (kept + per if s.grad_ckpt else t["layers"] * per)
            if y <= 1.2 * logits_bytes(m, s):
                continue  # the loss sets the peak: the layer's backward does not show
            scale = _eager_score_bytes(m) / EAGER_SCORE_BYTES  # gpt-oss keeps its scores in 16 bits
            xs.append(scale * (m.num_heads or 0) * s.seq_len * s.seq_len * s.micro_batch)
            ys.append(y)
    if not xs:
        print("no trace where the layers set the peak")
        return 1
    fitted = sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)
    print(f"eager backward bytes per score: fitted {fitted:.2f} on {len(xs)} traces; engine "
          f"EAGER_BACKWARD_SCORE_BYTES = {EAGER_BACKWARD_SCORE_BYTES}")
    print("\nmean |error| % per architecture and term (traces):")
    for arch, terms in sorted(summary(comparisons()).items()):
        print(f"  {arch:12s} " + "  ".join(f"{k} {v[1]:5.1f}" for k, v in terms.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
