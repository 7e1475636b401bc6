"""The counterfactual's arithmetic (train/counterfactual.py) on a recorded batch built as the trainer records one
(TRL scores a generation batch, ``replay_row`` is added, TRL's own shuffle and split make the micro-batches) and a
real rollout log of it (train/artifacts/rollout_log.py), with a TRL trainer around a 1-layer model: no training run.
"""

import inspect
import statistics
from dataclasses import replace

import pytest
import torch

from rewards.common import completion_text
from train import counterfactual as cf
from train.artifacts.replay_batches import REPLAY_ROW
from train.artifacts.rollout_log import build_log, rollouts_from_batch, write_atomically

STEP = 3
G = 4
PROBLEMS = [("p0", "What is 2+2?", "4"), ("p1", "What is 1+2?", "3")]
COMPLETIONS = ["ANSWER: 4", "ANSWER: 5", "4", "I do not know", "ANSWER: 3", "3", "ANSWER: 7", "ANSWER: 3"]
NAMES = ["correctness", "format"]


def lenient(completions, answer, **kwargs):
    """Pays the right number anywhere (the run's reward)."""
    return [float(a in completion_text(c)) for c, a in zip(completions, answer)]


def strict(completions, answer, **kwargs):
    """Pays only an ``ANSWER:`` line with the right number (the new verifier)."""
    return [float(completion_text(c).strip() == f"ANSWER: {a}") for c, a in zip(completions, answer)]


def answer_line(completions, **kwargs):
    return [float(completion_text(c).startswith("ANSWER:")) for c in completions]


@pytest.fixture(scope="module")
def trainer(cpu_model, tmp_path_factory):
    """TRL's GRPOTrainer around a 1-layer Llama with the CPU model's tokenizer: 2 prompts x 4 completions per
    step, in 4 micro-batches of 2 (so the shuffle matters), rewards weighted 1.0 and 0.25."""
    from datasets import Dataset
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM
    from trl import GRPOConfig, GRPOTrainer

    tokenizer = AutoTokenizer.from_pretrained(cpu_model)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    dataset = Dataset.from_list(
        [{"prompt": [{"role": "user", "content": q}], "answer": a, "id": i} for i, q, a in PROBLEMS]
    )
    args = GRPOConfig(
        output_dir=str(tmp_path_factory.mktemp("cf")), per_device_train_batch_size=2, gradient_accumulation_steps=4,
        num_generations=G, max_completion_length=16, use_cpu=True, report_to=[], reward_weights=[1.0, 0.25],
        gradient_checkpointing=False, logging_steps=1,
    )  # fmt: skip
    return GRPOTrainer(
        model=LlamaForCausalLM(config),
        reward_funcs=[lenient, answer_line],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
    )


@pytest.fixture(scope="module")
def recorded(trainer, tmp_path_factory):
    """(run dir, recorded micro-batches, what TRL computed): the step as the trainer records it."""
    from trl.trainer.utils import shuffle_sequence_dict, split_tensor_dict

    tokenizer = trainer.processing_class
    rows = [trainer.train_dataset[i] for i in range(len(PROBLEMS)) for _ in range(G)]
    ids = [tokenizer.encode(text, add_special_tokens=False) + [tokenizer.eos_token_id] for text in COMPLETIONS]
    batch = {"completion_ids": ids, "prompt_ids": None}
    tokenized = trainer._tokenize_prompts([row["prompt"] for row in rows])[0]
    batch["prompt_ids"] = [list(p) for p in tokenized]
    scored = cf.score(trainer, rows, batch, [lenient, answer_line], NAMES)
    output = {  # what _generate_and_score_completions hands on, with the row ids the trainer adds
        "prompt_ids": torch.nn.utils.rnn.pad_sequence(
            [torch.tensor(p).flip(0) for p in batch["prompt_ids"]],
            batch_first=True,
            padding_value=tokenizer.pad_token_id,
        ).flip(1),  # left-padded, as TRL pads prompts
        "completion_ids": torch.nn.utils.rnn.pad_sequence(
            [torch.tensor(c) for c in ids], batch_first=True, padding_value=tokenizer.pad_token_id
        ),
        "advantages": scored.advantages,
        REPLAY_ROW: torch.arange(len(rows)),
    }
    output["prompt_mask"] = torch.stack(
        [
            torch.cat([torch.zeros(output["prompt_ids"].size(1) - len(p)), torch.ones(len(p))])
            for p in batch["prompt_ids"]
        ]
    ).long()
    output["completion_mask"] = torch.stack(
        [torch.cat([torch.ones(len(c)), torch.zeros(output["completion_ids"].size(1) - len(c))]) for c in ids]
    ).long()
    torch.manual_seed(1)
    entries = [
        {"inputs": part, "num_items_in_batch": torch.tensor(8)}
        for part in split_tensor_dict(shuffle_sequence_dict(output), 4)
    ]
    assert [e["inputs"][REPLAY_ROW].tolist() for e in entries] != [[0, 1], [2, 3], [4, 5], [6, 7]]  # shuffled
    run = tmp_path_factory.mktemp("run")
    rollouts = rollouts_from_batch(
        ids=[row["id"] for row in rows], answers=[row["answer"] for row in rows],
        prompts=[row["prompt"] for row in rows], completions=scored.completions,
        rewards={name: [float("nan") if v is None else v for v in values] for name, values in scored.rewards.items()},
        advantages=scored.advantages.tolist(), lengths=None, max_completion_length=16, terminated=None,
        num_generations=G, step=STEP,
    )  # fmt: skip
    (run / "rollouts").mkdir()
    write_atomically(build_log(rollouts, G, {}), run / "rollouts" / f"rollouts-step{STEP:06d}-{STEP:06d}.eval")
    return run, entries, scored


def counterfactual(trainer, run, entries, funcs):
    batch = cf.generation_order(entries)
    logged = cf.logged_rollouts(run, STEP, G, NAMES)
    rows = cf.dataset_rows(trainer, logged)
    paid = cf.score(trainer, rows, batch, cf.paid_rewards(logged, NAMES), NAMES)
    cf.check_match(logged, batch, paid)
    return batch, logged, paid, cf.score(trainer, rows, batch, funcs, NAMES)


def test_the_trl_names_the_counterfactual_calls_are_there():
    from trl import GRPOTrainer

    params = list(inspect.signature(GRPOTrainer._generate_single_turn).parameters)
    assert params[:5] == ["self", "prompt_ids", "images", "multimodal_fields", "num_generations"]
    params = list(inspect.signature(GRPOTrainer._calculate_rewards).parameters)
    assert params == ["self", "inputs", "prompts", "completions", "completion_ids_list"]
    assert "self._generate_single_turn(" in inspect.getsource(GRPOTrainer._generate)


def test_the_log_rows_come_back_in_generation_order_with_what_was_paid(trainer, recorded):
    run, entries, scored = recorded
    batch = cf.generation_order(entries)
    assert torch.equal(batch["advantages"], scored.advantages)
    logged = cf.logged_rollouts(run, STEP, G, NAMES)
    assert [(r.sample, r.epoch) for r in logged] == [(f"{p}@{STEP}", e) for p, _, _ in PROBLEMS for e in range(1, 5)]
    assert [r.rewards["correctness"] for r in logged] == [1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0]
    assert [r.completion for r in logged] == COMPLETIONS  # TRL decodes the ids back to the texts
    with pytest.raises(cf.ReplayError, match="no rollout log holds step 4"):
        cf.logged_rollouts(run, STEP + 1, G, NAMES)


def test_the_advantages_are_trls_group_normalization_of_the_weighted_rewards(trainer, recorded):
    """TRL's settings here: scale_rewards 'group', sum_then_normalize, weights 1.0/0.25, unbiased std + 1e-4."""
    run, entries, scored = recorded
    total = [c + 0.25 * f for c, f in zip(scored.rewards["correctness"], scored.rewards["format"])]
    expected = []
    for g in range(len(PROBLEMS)):
        group = total[g * G : (g + 1) * G]
        mean, std = statistics.fmean(group), statistics.stdev(group)
        expected += [(r - mean) / (std + 1e-4) for r in group]
    assert scored.advantages.tolist() == pytest.approx(expected, abs=1e-6)
    assert total == [1.25, 0.25, 1.0, 0.0, 1.25, 1.0, 0.25, 1.25]


def test_with_the_runs_own_rewards_nothing_changes_bit_for_bit(trainer, recorded):
    run, entries, _ = recorded
    batch, logged, paid, now = counterfactual(trainer, run, entries, [lenient, answer_line])
    assert torch.equal(now.advantages, batch["advantages"])
    assert cf.changes(logged, paid, now) == ([], [])
    for entry, again in zip(entries, cf.with_advantages(entries, now.advantages)):
        assert torch.equal(entry["inputs"]["advantages"], again["inputs"]["advantages"])


def test_a_changed_verdict_changes_exactly_that_groups_advantages(trainer, recorded):
    run, entries, _ = recorded
    batch, logged, paid, now = counterfactual(trainer, run, entries, [strict, answer_line])
    rewards, advantages = cf.changes(logged, paid, now)
    # only the bare "4" (p0, epoch 3) was paid by the lenient reward and not by the strict one; p1's "3" too
    assert [(c.sample, c.epoch, c.what, c.old, c.new) for c in rewards] == [
        (f"p0@{STEP}", 3, "correctness", 1.0, 0.0),
        (f"p1@{STEP}", 2, "correctness", 1.0, 0.0),
    ]
    assert {c.sample for c in advantages} == {f"p0@{STEP}", f"p1@{STEP}"}
    # one verdict in one group: the other group's advantages are bit for bit the recorded ones
    batch2, logged2, paid2, now2 = counterfactual(trainer, run, entries, [_strict_only_for("p0"), answer_line])
    rewards2, advantages2 = cf.changes(logged2, paid2, now2)
    assert [(c.sample, c.epoch) for c in rewards2] == [(f"p0@{STEP}", 3)]
    assert sorted(c.epoch for c in advantages2) == [1, 2, 3, 4] and {c.sample for c in advantages2} == {f"p0@{STEP}"}
    assert torch.equal(now2.advantages[G:], batch2["advantages"][G:])
    new = cf.with_advantages(entries, now2.advantages)
    for entry in new:  # each row carries its own new advantage, wherever the shuffle put it
        assert torch.equal(entry["inputs"]["advantages"], now2.advantages[entry["inputs"][REPLAY_ROW]])


def _strict_only_for(problem_id):
    def reward(completions, answer, id, **kwargs):
        loose, tight = lenient(completions, answer), strict(completions, answer)
        return [t if i == problem_id else v for v, t, i in zip(loose, tight, id)]

    return reward


def test_a_log_that_is_not_this_batch_is_an_error(trainer, recorded, tmp_path):
    run, entries, _ = recorded
    batch = cf.generation_order(entries)
    logged = cf.logged_rollouts(run, STEP, G, NAMES)
    rows = cf.dataset_rows(trainer, logged)
    wrong = list(logged)  # two rows' paid rewards swapped: as a row matched to another row's sample
    wrong[1], wrong[2] = replace(logged[1], rewards=logged[2].rewards), replace(logged[2], rewards=logged[1].rewards)
    paid = cf.score(trainer, rows, batch, cf.paid_rewards(wrong, NAMES), NAMES)
    with pytest.raises(cf.ReplayError, match="do not give the recorded advantages"):
        cf.check_match(wrong, batch, paid)
    paid = cf.score(trainer, rows, batch, cf.paid_rewards(logged, NAMES), NAMES)
    cf.check_match(logged, batch, paid)  # the right log passes
    edited = [replace(logged[0], completion="ANSWER: 44"), *logged[1:]]
    with pytest.raises(cf.ReplayError, match="p0@3 epoch 1: the recorded completion decodes to 'ANSWER: 4'"):
        cf.check_match(edited, batch, paid)
    unrecorded = [{**e, "inputs": {k: v for k, v in e["inputs"].items() if k != REPLAY_ROW}} for e in entries]
    with pytest.raises(cf.ReplayError, match="no row ids"):
        cf.generation_order(unrecorded)


def test_the_cli_prints_each_changed_reward_with_its_completion_and_the_two_losses(trainer, recorded):
    from train.replay import counterfactual_lines

    run, entries, _ = recorded
    _, logged, paid, now = counterfactual(trainer, run, entries, [_strict_only_for("p0"), answer_line])
    rewards, advantages = cf.changes(logged, paid, now)
    result = {
        "step": STEP,
        "replayed": {"loss": 0.5, "grad_norm": 1.25},
        "counterfactual": {
            "rollouts": 8, "num_generations": G, "reward_funcs": NAMES, "reward_weights": [1.0, 0.25],
            "changed_rewards": rewards, "changed_advantages": advantages, "loss": 0.25, "grad_norm": 1.25,
        },
    }  # fmt: skip
    lines = counterfactual_lines(result)
    assert lines[0].endswith("(correctness, format; weights 1 0.25; groups of 4)")
    assert lines[1:3] == ["  rewards changed: 1 of 8 completions", "    p0@3 #3 correctness: 1 -> 0   '4'"]
    assert lines[3] == "  advantages changed: 4 of 8 completions, 1 group"
    assert lines[-2:] == [
        "  loss: counterfactual 0.25, replayed 0.5 (differs by 0.25)",
        "  grad_norm: counterfactual 1.25, replayed 1.25 (equal)",
    ]
