"""One rank of tests/train/guards/test_on_policy_zero3.py: the on-policy guard's measurement under a ZeRO-3-shaped
stand-in, over gloo on CPU. Not a test module (run as ``python -m``; the rank and world come from the environment).

The stand-in policy's forward is a collective, as a DeepSpeed ZeRO-3 forward is (each layer all-gathers its weight
shards from every rank): a rank that runs it while another waits in a different collective hangs, or mixes data. The
engine is the server engine's shape: only the main rank ``saves_here`` and scores through the servers.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import timedelta
from types import SimpleNamespace

import torch

VOCAB = 8
TOKENS = {"<prompt>": [1, 2, 3], "completion": [4, 5, 6]}


class ShardedPolicy(torch.nn.Module):
    """Logits from a weight whose shards live on every rank: the forward all-gathers them first (ZeRO-3's gather)."""

    def __init__(self, rank: int, world: int) -> None:
        super().__init__()
        full = torch.arange(VOCAB * VOCAB, dtype=torch.float32).reshape(VOCAB, VOCAB) / 100
        self.shard = torch.nn.Parameter(full.chunk(world)[rank].clone())
        self.world = world
        self.forwards = 0

    @property
    def device(self):
        return torch.device("cpu")

    def forward(self, input_ids):
        self.forwards += 1
        shards = [torch.empty_like(self.shard) for _ in range(self.world)]
        torch.distributed.all_gather(shards, self.shard.detach())  # a collective: every rank must call it
        weight = torch.cat(shards)
        return SimpleNamespace(logits=weight[input_ids])


class Tokenizer:
    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": TOKENS["completion"]}

    def apply_chat_template(self, messages, add_generation_prompt, tokenize, return_dict):
        return TOKENS["<prompt>"]


class Dataset(list):
    def select(self, indices):
        return Dataset(self[i] for i in indices)


class ServerEngine:
    """Scores on the main rank only, as the server engine does (``saves_here`` is the main process)."""

    def __init__(self, main: bool) -> None:
        self.saves_here = main
        self.scored = 0

    def prompt_logprobs(self, prompt_ids, completion_ids):
        assert self.saves_here, "only the main rank may ask the servers"
        self.scored += 1
        return [-1.0] * len(completion_ids)


def main() -> None:
    from accelerate import PartialState

    state = PartialState(cpu=True, timeout=timedelta(seconds=float(os.environ["GLOO_TIMEOUT_S"])))
    rank, world = state.process_index, state.num_processes
    assert world == 2 and torch.distributed.get_backend() == "gloo"

    from train.guards.on_policy import OnPolicyGuard

    engine = ServerEngine(state.is_main_process)
    trainer = SimpleNamespace(
        model=ShardedPolicy(rank, world),
        rollout_engine=engine,
        processing_class=Tokenizer(),
        train_dataset=Dataset([{"prompt": [{"role": "user", "content": "1+1?"}]}] * 3),
        accelerator=SimpleNamespace(is_main_process=state.is_main_process),
    )
    gap = OnPolicyGuard(every=10, precision="4bit").measure(trainer)
    json.dump({"rank": rank, "gap": gap, "forwards": trainer.model.forwards, "scored": engine.scored}, sys.stdout)
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
