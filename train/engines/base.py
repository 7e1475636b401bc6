"""What both adapter engines do: save the policy's LoRA adapter at every sync, load it under a new name,
count and time the syncs, record which adapter the rollouts come from, say so in run.json, and remove
their files when the run ends.

TRL 1.16 syncs a PEFT policy into vLLM by merging the adapter into the base and pushing full weights. On
a bitsandbytes 4-bit base that merge re-quantizes the weights and pushes packed tensors without their
quantization state, so the rollouts would not come from the policy being trained. An adapter engine
leaves the base where vLLM loaded it and sends only the adapter (peft's own files), under a new name
each optimizer step, so nothing can keep serving a stale one. Where vLLM runs is the subclass's part:
``train/engines/colocated.py`` (in each training process) and ``train/engines/server.py`` (OpenAI servers).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from train.engines.adapter_save import save_adapter
from train.engines.choice import Engine
from train.trl_seams import SeamedVLLMGeneration


@dataclass
class SyncRecord:
    """Adapter versions loaded so far (their names) and what each sync cost, for run.json and benchmarks."""

    loaded: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)


class AdapterEngine(SeamedVLLMGeneration):
    """TRL's vLLM generation with adapter-only weight sync (see the module docstring).

    Subclasses set ``engine`` (its value is run.json's ``rollout_engine.mode``) and implement ``start_engine`` (vLLM up),
    ``adapter_name``, ``adapter_path``, ``load_adapter`` (make it the one rollouts use) and, where they hold
    something beyond files, ``release``; ``engine_facts`` adds to run.json.
    """

    engine: Engine

    def __init__(self, *args, settings, adapter_dir: str | Path, owns_adapter_dir: bool, **kwargs) -> None:
        self.settings = settings
        self.sync_record = SyncRecord()
        self.adapter_dir = Path(adapter_dir)
        self._owns_adapter_dir = owns_adapter_dir  # True: the whole directory is this engine's to remove
        self._current_path: Path | None = None
        self._rollout_adapter: str | None = None
        self._closed = False
        try:
            super().__init__(*args, **kwargs)  # TRL's __init__ starts vLLM (start_engine)
        except BaseException:
            self.close()
            raise

    # ---- what a subclass says -------------------------------------------------------------------

    def adapter_name(self, version: int) -> str:
        raise NotImplementedError

    def adapter_path(self, name: str, version: int) -> Path:
        raise NotImplementedError

    @property
    def saves_here(self) -> bool:
        """Whether this process writes (and loads) the adapter: every process for its own vLLM, or the main one."""
        return True

    def load_adapter(self, name: str, version: int, path: Path) -> None:
        """Load the adapter saved at ``path`` and make it the one rollouts use (the previous one is unloaded)."""
        raise NotImplementedError

    def release(self) -> None:
        """Give back what the engine holds besides its files (called once, from ``close``)."""

    def engine_facts(self) -> dict:
        """Mode-specific facts for run.json's ``rollout_engine``."""
        return {}

    # ---- shared -----------------------------------------------------------------------------------

    @property
    def adapter_version(self) -> int:
        """Adapter versions loaded so far (the current one's number)."""
        return len(self.sync_record.loaded)

    @property
    def rollout_adapter(self) -> str | None:
        """The adapter the next (and, once the run ended, the last) rollouts are generated with, as rollout logs
        record it; None before the first sync and on processes that do not load adapters."""
        return self._rollout_adapter

    def sync_weights(self) -> None:
        """Save the policy's adapter and load it under a new name; the base is not touched. TRL calls this
        once per optimizer step (and before the first generation)."""
        start = time.perf_counter()
        model = self.model
        adapter_params = [p for name, p in model.named_parameters() if "lora_" in name]
        version = self.adapter_version + 1
        name = self.adapter_name(version)
        path = self.adapter_path(name, version)
        with self.gather_params(adapter_params):  # a collective under ZeRO-3: every process takes part
            if self.saves_here:
                save_adapter(model, path)  # peft's files, without the Hub request peft's "auto" makes per save
        if self.saves_here:
            self.load_adapter(name, version, path)  # a broken adapter fails here, not mid-generation
            previous, self._current_path, self._rollout_adapter = self._current_path, path, name
            if previous is not None:
                shutil.rmtree(previous, ignore_errors=True)
        self.sync_record.loaded.append(name)
        self.sync_record.seconds.append(time.perf_counter() - start)

    def manifest_state(self) -> dict:
        """What run.json records about the rollout engine (at a checkpoint: the adapter of the latest rollouts,
        i.e. the policy before its last step)."""
        return {
            "mode": self.engine.value,
            "adapter_versions_loaded": self.adapter_version,
            "rollout_adapter": self.rollout_adapter,
            **self.engine_facts(),
        }

    def close(self) -> None:
        """End of the run, also after a failure: release the engine and remove its adapter files. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.release()
        finally:
            if self._owns_adapter_dir:
                shutil.rmtree(self.adapter_dir, ignore_errors=True)
            elif self._current_path is not None:
                shutil.rmtree(self._current_path, ignore_errors=True)
