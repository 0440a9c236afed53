"""One-off derivation of planner/engine/data/model_presets.csv from the shared, sourced table.

Adds sizing columns the shared table keeps in its notes (see data/README.md); all source
columns are kept verbatim. An optional third argument, data/model_architectures_added.csv
(models the shared table lacks, same columns plus their sizing columns read from each
config.json), is appended after the shared rows with its own sizing columns as given.
"""
import csv
import sys
from pathlib import Path

src, dst = sys.argv[1], sys.argv[2]
added_src = sys.argv[3] if len(sys.argv) > 3 else None
rows = list(csv.DictReader(open(src, encoding="utf-8")))
extra = ["model_type", "attention_bias", "qk_norm", "norms_per_layer", "q_lora_rank",
         "qk_rope_head_dim", "v_head_dim", "dense_layers", "local_layers", "flops_per_sample",
         "embedding_dim", "derived_note", "hf_id", "linear_attention_layers",
         "linear_state_values_per_layer", "mtp_layers", "checkpoint_weights", "checkpoint_weights_source",
         "compress_ratios", "index_topk", "index_heads", "index_head_dim", "o_lora_rank", "o_groups", "hc_mult"]
# The published checkpoint's own weight format per part, read from each config.json (data/README.md).
CHECKPOINT = {r["id"]: r for r in csv.DictReader(open(Path(__file__).with_name("checkpoint_weights.csv"),
                                                      encoding="utf-8"))}
# Hugging Face repository ids of shared-table models whose source names that repository.
HF_IDS = {
    "llama-3.1-8b": "meta-llama/Llama-3.1-8B", "llama-3.1-70b": "meta-llama/Llama-3.1-70B",
    "llama-3.1-405b": "meta-llama/Llama-3.1-405B", "llama-3.3-70b": "meta-llama/Llama-3.3-70B-Instruct",
    "qwen3-8b": "Qwen/Qwen3-8B", "qwen3-32b": "Qwen/Qwen3-32B", "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B",
    "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B", "deepseek-v3": "deepseek-ai/DeepSeek-V3",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-v0.1", "mixtral-8x22b": "mistralai/Mixtral-8x22B-v0.1",
}
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
        e["mtp_layers"] = "1"
        notes.append("1 multi-token-prediction module (notes: the 14B MTP module; config num_nextn_predict_layers 1)")
    e["hf_id"] = HF_IDS.get(i, "")
    e["derived_note"] = "; ".join(notes)
    r.update(e)
    out.append(r)
fields = list(rows[0].keys())
if added_src:
    for r in csv.DictReader(open(added_src, encoding="utf-8")):
        e = dict.fromkeys(extra, "")
        e.update(model_type="decoder", attention_bias="false", qk_norm="false", norms_per_layer="2")
        e.update({k: v for k, v in r.items() if k in extra and v != ""})
        e["derived_note"] = "from model_architectures_added.csv (sizing columns read from the config.json)"
        out.append({**{k: r.get(k, "") for k in fields if k not in extra}, **e})
for r in out:
    c = CHECKPOINT.get(r["id"], {})
    r["checkpoint_weights"] = c.get("checkpoint_weights", "")
    r["checkpoint_weights_source"] = c.get("checkpoint_weights_source", "")
with open(dst, "w", newline="", encoding="utf-8") as f:
    w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    w.writerows(out)
print(len(out), "rows")
