"""The ``python`` tool a policy calls while it answers, in one place: the tool, its TRL and Inspect adapters, the turns
an eval feeds a tool-trained policy, its chat templates and its warm start. Training and the evals both import it;
it imports neither (only ``rewards``, ``problems`` and third-party libraries), so a policy meets one tool in both.

- ``session``: the tool itself: ``PythonSession.run(code)`` in a fresh bubblewrap sandbox per call, ``ToolLimits``,
  the result text the model reads
- ``trl_environment``: the TRL adapter (a GRPOTrainer ``environment_factory``), the tool's schema and per-step
  metrics, and the config keys that shape a run's tool turns (``TOOL_CONFIG_KEYS``, ``tool_limits``, ``tool_rounds``)
- ``inspect_tool``: the Inspect adapter, ``python_tool(limits)``, for tasks with ``sandbox="bwrap"``
- ``inspect_sandbox``: the Inspect sandbox provider ``verigrpo/bwrap`` (exec / read_file / write_file, all inside
  bwrap) whose ``/work`` the Inspect adapter's session runs in
- ``turns``: a tool-trained policy's turns in an eval, as TRL's tool loop builds them (schema, ids, parser, rounds,
  budget); the evals' model providers ``verigrpo-policy`` and ``verigrpo/<run dir>`` use it
- ``chat_template``: the chat template a tool run renders and parses with (``chatml_tools``, ``chat_templates/``, or
  a file) and why a template cannot run TRL's tool loop
- ``warm_start``: the tool-format warm start: a short SFT on transcripts of real tool calls (scripts/prepare_tool_model.py)
- ``seams``: the two private names of TRL and Inspect the eval turns need, the one place an upgrade breaks them
"""
