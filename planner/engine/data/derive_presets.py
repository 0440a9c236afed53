"""One-off derivation of planner/engine/data/model_presets.csv from the shared, sourced table.

Adds sizing columns the shared table keeps in its notes (see data/README.md); all source
columns are kept verbatim.
"""
import csv
import sys

src, dst = sys.argv[1], sys.argv[2]
rows = list(csv.DictReader(open(src, encoding="utf-8")))
extra = ["model_type", "attention_bias", "qk_norm", "norms_per_layer", "q_lora_rank",
         "qk_rope_head_dim", "v_head_dim", "dense_layers", "local_layers", "flops_per_sample",
         "embedding_dim", "derived_note"]
out = []
for r in rows:
    i = r["id"]
    e = dict.fromkeys(extra, "")
    e["model_type"] = "decoder"
    e["attention_bias"] = "false"
    e["qk_norm"] = "false"
    e["norms_per_layer"] = "2"
    notes = []
    if i.startswith(("bert", "bge", "e5", "all-minilm")):
        e["model_type"] = "encoder"
        e["embedding_dim"] = r["hidden_size"]
        notes.append("encoder: BERT-style biases, LayerNorm, 2 token types, pooler")
    if i in ("resnet-50", "vit-b-16") or i.startswith("yolov8"):
        e["model_type"] = "vision"
        g = float(r["gflops_per_sample"])
        factor = 2 if i in ("resnet-50", "vit-b-16") else 1
        e["flops_per_sample"] = repr(g * 1e9 * factor)
        notes.append(f"flops_per_sample = gflops_per_sample x 1e9 x {factor} (2 FLOPs per MAC; "
                     + ("torchvision counts MACs)" if factor == 2 else "Ultralytics already counts 2 per MAC)"))
    if i.startswith("qwen2.5"):
        e["attention_bias"] = "true"
        notes.append("QKV bias (model card)")
    if i.startswith("qwen3"):
        e["qk_norm"] = "true"
        notes.append("QK-norm (Qwen3 technical report)")
    if i.startswith("gemma-2") or i.startswith("gemma-3"):
        e["norms_per_layer"] = "4"
        notes.append("4 RMSNorms per layer (pre/post attention and FFN)")
    if i.startswith("gemma-3"):
        e["qk_norm"] = "true"
    if r["sliding_window"]:
        L = int(r["layers"])
        if i.startswith("gemma-2"):
            local = L // 2
        elif i.startswith("gemma-3"):
            local = L - L // 6
        else:
            local = L
        e["local_layers"] = str(local)
        notes.append(f"{local} of {L} layers use the sliding window (from notes)")
    if i == "deepseek-v3":
        e.update(q_lora_rank="1536", qk_rope_head_dim="64", v_head_dim="128", dense_layers="3")
        notes.append("MLA dims and 3 leading dense layers from notes")
    e["derived_note"] = "; ".join(notes)
    r.update(e)
    out.append(r)
fields = list(rows[0].keys())
with open(dst, "w", newline="", encoding="utf-8") as f:
    w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(out)
print(len(out), "rows")
