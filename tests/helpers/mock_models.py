"""Inspect's mockllm model answering each question from a table, for evals without weights. tests/conftest.py's
``mock_model`` fixture is function-scoped; a module-scoped fixture (logs several tests read) builds its model here."""


def mock_output(text: str):
    """A model output of ``text`` with a fixed token usage."""
    from inspect_ai.model import ModelOutput, ModelUsage

    output = ModelOutput.from_content("mockllm/model", text)
    output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
    return output


def answering_model(reply_for_question: dict[str, str], default: str = "I don't know."):
    """A mockllm model answering each sample from ``reply_for_question[its last message]`` (order-independent)."""
    from inspect_ai.model import get_model

    def respond(messages, tools, tool_choice, config):
        return mock_output(reply_for_question.get(messages[-1].text, default))

    return get_model("mockllm/model", custom_outputs=respond)
