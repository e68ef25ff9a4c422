#!/usr/bin/env python3
"""pipeline_plain.py: transformers' pipeline("text-generation") as people use it, with nothing
for llmprof. No download: the model has random weights from a config (plain_common.py) and the
tokenizer is built here (a word-level `tokenizers` vocabulary of the model's size, one token per
space-separated word, so a prompt of N words is N tokens; the summary says how many it got). It times itself with CUDA events from
forward hooks and prints the self-check JSON lines of docs/metrics.md.

    llmprof run --mode light -- python3 examples/pipeline_plain.py --model llama-3.2-1b --batch 4

The pipeline calls generate() once per batch of prompts (batch_size=--batch), so llmprof_auto
gives each call prefill / decode_all / decode_step ranges.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plain_common  # noqa: E402


def build_tokenizer(vocab_size, transformers):
    """A fast word-level tokenizer of vocab_size tokens built in memory: ids 0-3 are <pad>, <unk>,
    <eos>, <bos>; id i >= 4 is the word "w<i>". (Special tokens must not be substrings of words:
    they are matched anywhere in the text, so an unk "w1" would split "w123" in two.)"""
    from tokenizers import Tokenizer, models, pre_tokenizers
    vocab = {"<pad>": 0, "<unk>": 1, "<eos>": 2, "<bos>": 3}
    vocab.update(("w%d" % i, i) for i in range(4, vocab_size))
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>",
                                                eos_token="<eos>", bos_token="<bos>")
    # some versions rebuild the backend: make sure words are split on whitespace only
    fast.backend_tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast.padding_side = "left"   # decoder-only generation pads on the left
    return fast


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    plain_common.add_args(p)
    args = p.parse_args()
    plain_common.check_args(p, args)
    import torch
    import transformers
    plain_common.need_cuda(torch)
    model, cfg = plain_common.build_model(args, torch, transformers)
    tok = build_tokenizer(cfg.vocab_size, transformers)
    pipe = transformers.pipeline("text-generation", model=model, tokenizer=tok, device=model.device)
    gen = torch.Generator(device="cpu").manual_seed(args.seed)
    ids = torch.randint(4, cfg.vocab_size, (args.batch, args.prompt_len), generator=gen).tolist()
    prompts = [" ".join("w%d" % t for t in row) for row in ids]
    lengths = [len(tok(x)["input_ids"]) for x in prompts]
    if max(lengths) != args.prompt_len:
        sys.stderr.write("note: the prompts tokenize to %d..%d tokens, not %d\n"
                         % (min(lengths), max(lengths), args.prompt_len))
    clock = plain_common.ForwardClock(torch, model)
    results = []
    for _ in range(args.iters):
        clock.start()
        out = pipe(prompts, batch_size=args.batch, max_new_tokens=args.new_tokens,
                   min_new_tokens=args.new_tokens, do_sample=False, return_full_text=False)
        r = clock.finish()
        if r is None or len(out) != args.batch:
            sys.stderr.write("error: the pipeline did not run one batched generation\n")
            return 1
        results.append(r)
    plain_common.report(results, args.batch, {
        "model": args.model_config or args.model, "batch": args.batch,
        "prompt_len": args.prompt_len, "prompt_tokens": max(lengths), "new_tokens": args.new_tokens,
        "torch": torch.__version__, "transformers": transformers.__version__})
    return 0


if __name__ == "__main__":
    sys.exit(main())
